"""The papers' studies (``hetsched experiment khemka|machovec|tarplee|hansen|hwang``) and
``hetsched compare``: many runs, as cells run in processes or on Dask (:mod:`.cells`), with
confidence intervals (:mod:`.statistics`). One module per paper, its command line
(``<paper>_cli.py``) and figures next to it."""
