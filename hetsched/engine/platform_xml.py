"""SimGrid 4.1 platform XML as SimGrid 3.32 reads it (``src/surf/xml/simgrid.dtd``,
``src/surf/xml/surfxml_sax_cb.cpp``): the tree of elements with their lines, and the elements
and attributes the engine accepts, with the DTD's defaults.
"""

from __future__ import annotations

from pathlib import Path
from xml.parsers import expat

from hetsched.engine.errors import PlatformError

REQUIRED = object()
"""An attribute without default: the element must have it."""
ATTRIBUTES: dict[str, dict[str, object]] = {
    "platform": {"version": "0.0"},
    "config": {"id": ""},
    "prop": {"id": REQUIRED, "value": REQUIRED},
    "zone": {"id": REQUIRED, "routing": REQUIRED},
    "AS": {"id": REQUIRED, "routing": REQUIRED},
    "host": {
        "id": REQUIRED,
        "speed": REQUIRED,
        "core": "1",
        "speed_file": "",
        "availability_file": "",
        "state_file": "",
        "coordinates": "",
        "pstate": "0.0",
    },
    "cluster": {
        "id": REQUIRED,
        "prefix": REQUIRED,
        "suffix": REQUIRED,
        "radical": REQUIRED,
        "speed": REQUIRED,
        "core": "1",
        "bw": REQUIRED,
        "lat": REQUIRED,
        "sharing_policy": "SPLITDUPLEX",
        "topology": "FLAT",
        "topo_parameters": "",
        "bb_bw": "",
        "bb_lat": "0s",
        "bb_sharing_policy": "SHARED",
        "router_id": "",
        "limiter_link": "",
        "loopback_bw": "",
        "loopback_lat": "",
    },
    "link": {
        "id": REQUIRED,
        "bandwidth": REQUIRED,
        "bandwidth_file": "",
        "latency": "0",
        "latency_file": "",
        "state_file": "",
        "sharing_policy": "SHARED",
    },
    "router": {"id": REQUIRED, "coordinates": ""},
    "route": {"src": REQUIRED, "dst": REQUIRED, "symmetrical": "YES"},
    "zoneRoute": {
        "src": REQUIRED,
        "dst": REQUIRED,
        "gw_src": REQUIRED,
        "gw_dst": REQUIRED,
        "symmetrical": "YES",
    },
    "link_ctn": {"id": REQUIRED, "direction": "NONE"},
}
ATTRIBUTES["ASroute"] = ATTRIBUTES["zoneRoute"]
UNSUPPORTED_TAGS = {
    "include", "random", "trace", "trace_connect", "cabinet", "peer", "backbone", "storage",
    "storage_type", "mount", "disk", "host_link", "bypassRoute", "bypassASroute",
    "bypassZoneRoute", "process", "actor", "argument", "model_prop",
}  # fmt: skip


class Element:
    """An XML element and its line in the file."""

    __slots__ = ("attributes", "children", "line", "tag")

    def __init__(
        self,
        tag: str,
        attributes: dict[str, str],
        line: int,
        children: list[Element] | None = None,
    ) -> None:
        self.tag = tag
        self.attributes = attributes
        self.line = line
        self.children = [] if children is None else children


def read_xml(path: Path) -> Element:
    """Parse ``path`` with expat, keeping each element's line number."""
    parser = expat.ParserCreate()
    top = Element("", {}, 0)
    stack: list[list[Element]] = [top.children]
    push, pop = stack.append, stack.pop

    def start(tag: str, attributes: dict[str, str]) -> None:  # expat gives a new dict
        element = Element(tag, attributes, parser.CurrentLineNumber)
        stack[-1].append(element)
        push(element.children)

    def end(_tag: str) -> None:
        pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    data = path.read_bytes()
    stripped = data.lstrip()  # SimGrid accepts white space before <?xml ...?>
    offset = data[: len(data) - len(stripped)].count(b"\n")
    try:
        parser.Parse(stripped, True)
    except expat.ExpatError as error:  # its line in the file, the white space counted
        where = f"{path}:{error.lineno + offset}"
        raise PlatformError(
            f"{where}: invalid XML: {expat.ErrorString(error.code)} (column {error.offset + 1})"
        ) from None
    finally:  # the parser and its handlers form a cycle: the tree must not hang on it, or it
        stack.clear()  # waits for a collection that walks its every element (Curie: 0.2-0.4 s)
    if not top.children:
        raise PlatformError(f"{path}: no XML element")
    if offset:
        for element in walk(top.children[0]):
            element.line += offset
    return top.children[0]


def walk(element: Element) -> list[Element]:
    elements = [element]
    for child in element.children:
        elements.extend(walk(child))
    return elements
