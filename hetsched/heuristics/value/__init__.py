"""Value-based heuristics with place-holders: Max Value, Max VPR, Max Value-PH, Max VPR-PH
(Khemka et al., "Resource management in heterogeneous parallel computing environments with
soft and hard deadlines", MIC 2015, sec. 3)."""
