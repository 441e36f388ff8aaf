"""Train and store the runs q40's warm-up panel shows (src/attention_qa/data/warmup_runs.json).

Run after changing ``recipe.train_tiny_lm`` or the panel's grid, under the setting notebooks
are saved with: ``env ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 .venv/bin/python
scripts/precompute_runs.py``. The unit tests train some runs again and compare.
"""

from attention_qa.explorers.training_recipe import RUNS_FILE, write_runs

if __name__ == "__main__":
    write_runs()
    print(f"wrote {RUNS_FILE}")
