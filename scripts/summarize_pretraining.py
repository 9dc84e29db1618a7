"""Prints the per-epoch losses and metrics of a pre-training run (used by scripts/main.sh)."""
import json
import sys
from pathlib import Path


def main(serialization_dir: str) -> int:
    epochs = sorted(Path(serialization_dir).glob("metrics_epoch_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    if not epochs:
        print(f"no metrics_epoch_*.json in {serialization_dir}", file=sys.stderr)
        return 1
    columns = ["training_loss", "validation_loss", "training_mlm_accuracy", "validation_mlm_accuracy",
               "validation_sbo_accuracy", "validation_mlm_perplexity"]
    print("epoch  " + "  ".join(f"{c.replace('validation', 'val').replace('training', 'train'):>18}" for c in columns))
    rows = [json.loads(path.read_text()) for path in epochs]
    for row in rows:
        print(f"{row['epoch']:>5}  " + "  ".join(f"{row.get(c, float('nan')):>18.4f}" for c in columns))
    first, last = rows[0], rows[-1]
    went_down = last["validation_loss"] < first["validation_loss"] and last["training_loss"] < first["training_loss"]
    print(f"loss {'went down' if went_down else 'did NOT go down'}: training {first['training_loss']:.3f} -> "
          f"{last['training_loss']:.3f}, validation {first['validation_loss']:.3f} -> {last['validation_loss']:.3f}")
    return 0 if went_down else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
