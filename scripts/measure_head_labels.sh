#!/bin/sh
# Measures the shipped language model's head labels and writes them beside its
# checkpoint, where the app and `mhaviz pairs` read them (lm/head_evidence.hpp): each
# head's pattern on the validation text, and the proof table (every head knocked out
# alone) on the model's minimal pairs. Run it again whenever the checkpoint, the pairs
# or the validation text change; the ctest cli.head_labels fails until then.
#
#   scripts/measure_head_labels.sh [MHAVIZ] [CHECKPOINT]
#
# MHAVIZ defaults to the repository's build/app/mhaviz, CHECKPOINT to its
# assets/models/mhaviz-small.npz;
# the labels go to CHECKPOINT with .npz replaced by .labels.json. About a minute of CPU.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
mhaviz=${1:-$root/build/app/mhaviz}
model=${2:-$root/assets/models/mhaviz-small.npz}
exec "$mhaviz" pairs --model "$model" --write-labels "${model%.npz}.labels.json"
