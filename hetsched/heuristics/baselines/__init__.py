"""Baselines the papers compare against: FCFS, EASY and conservative backfilling, Conservative
Multiple Queues (Khemka et al., MIC 2015, sec. 4.3) and Random (Machovec et al., 2017,
sec. III.D)."""
