"""The end of the game of a recording: a copy of its chunks that keeps only the decisions taken
with either player within ``--need`` points of the target (``agents.networks.near_the_end``, the
tensor form of the test ``rollouts:need=N`` records by), so a fit can learn them beside a
recording made with ``need`` (``distill.also_from``). Chunk numbers are kept, so the same chunks
stay held out.

    PYTHONPATH=. python bench/near_end_recording.py SOURCE DEST --need 30 [--chunks 50]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from training.algos.distill_recording import SPEC_FILE, chunk_files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rollout_gain import near_end_rows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("dest", type=Path)
    parser.add_argument("--need", type=int, required=True)
    parser.add_argument("--chunks", type=int, help="the first this many chunks (default: all)")
    args = parser.parse_args()
    chunks = chunk_files(args.source)
    numbers = sorted(chunks)[:args.chunks]
    args.dest.mkdir(parents=True, exist_ok=False)
    spec = json.loads((args.source / SPEC_FILE).read_text(encoding="utf-8"))
    spec["near_end_of"] = {"recording": str(args.source), "need": args.need}
    (args.dest / SPEC_FILE).write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    kept = total = 0
    for number in numbers:
        with np.load(chunks[number]) as data:
            rows = near_end_rows(data["obs"], args.need)
            np.savez_compressed(args.dest / chunks[number].name,
                                **{k: data[k][rows] if data[k].ndim else data[k] for k in data.files})
        kept, total = kept + int(rows.sum()), total + len(rows)
    print(f"{args.dest}: {len(numbers)} chunks, {kept:,} of {total:,} decisions "
          f"({kept / total:.1%}) within {args.need} points of the target")


if __name__ == "__main__":
    main()
