#!/usr/bin/env bash
# The GPU check: tests/test_gpu.py (every fixture config trained on CUDA and predicting as on the CPU, the
# main job's pre-train -> export -> reuse chain, use_amp training, bfloat16 coreference, the demo predictors)
# and tests/test_mixed_precision.py, on a machine that has CUDA and PyTorch but no package index (the device
# machines this project is lent: Python 3.12 and torch in the image, nothing outside reachable).
#
#   bash scripts/gpu_check.sh pack   # here, with network: the library's dependencies that image lacks,
#                                    # for its Python, as one tarball in .device/ (about 25 MB)
#   bash scripts/gpu_check.sh run    # there, from the repository root (carry .device): unpack, activate
#                                    # spanbert_lib.compat, run the tests; log and JUnit XML in $OUT
#   bash scripts/gpu_check.sh python -m benchmarks.encoder_bf16 --device cuda   # there: any script, same set-up
#
# On a machine with a package index, `bash scripts/test.sh -m gpu` with a CUDA torch does the same.
set -euo pipefail
cd "$(dirname "$0")/.."

PACK_DIR=.device
PY_VERSION=${GPU_CHECK_PYTHON:-3.12}
# Imported by spanbert_lib, allennlp and the two test modules, and missing from (or of another version in)
# the device image; the versions are requirements.lock's.
PACKAGES="allennlp allennlp-models annotated-types base58 blis boto3 botocore cached_path catalogue confection
cryptography cffi pycparser cymem defusedxml dill google-api-core google-auth google-cloud-core
google-cloud-storage google-resumable-media google-crc32c googleapis-common-protos proto-plus pyasn1
pyasn1_modules jmespath jsonnet lmdb more-itertools murmurhash nltk opentelemetry-api preshed pydantic
pydantic_core s3transfer spacy spacy-legacy spacy-loggers srsly tensorboardX termcolor thinc typing-inspection
wasabi weasel cloudpathlib smart_open transformers huggingface_hub tokenizers"

pack() {
    local work pins platforms
    work=$(mktemp -d)
    trap "rm -rf '$work'" EXIT
    pins=$(for name in $PACKAGES; do grep -i "^${name}==" requirements.lock; done)
    platforms=""
    for platform in manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_24_x86_64 manylinux_2_27_x86_64 \
        manylinux_2_28_x86_64 any; do platforms="$platforms --platform $platform"; done
    # shellcheck disable=SC2086
    .venv/bin/python -m pip install -q --no-deps --only-binary=:all: --target "$work/site" \
        --python-version "$PY_VERSION" --implementation cp $platforms $pins
    # fairscale 0.4.13 is an sdist only, and pure Python: the library's own copy
    cp -r .venv/lib/python3.*/site-packages/fairscale "$work/site/"
    # What the tests never load: other languages' spaCy data, test suites, AWS service models, TF/Flax models,
    # debug symbols.
    find "$work/site/spacy/lang" -mindepth 1 -maxdepth 1 -type d ! -name en ! -name xx -exec rm -rf {} +
    rm -rf "$work/site"/{spacy,thinc,blis,srsly}/tests "$work/site/nltk/test"
    find "$work/site/botocore/data" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
    find "$work/site/transformers" \( -name "modeling_tf_*.py" -o -name "modeling_flax_*.py" \) -delete
    find "$work/site" -name __pycache__ -type d -prune -exec rm -rf {} +
    find "$work/site" -name "*.so" -exec strip --strip-unneeded {} +
    mkdir -p "$PACK_DIR"
    tar -cJf "$PACK_DIR/site-packages.tar.xz" -C "$work" site
    grep -qx "/$PACK_DIR/" .git/info/exclude 2>/dev/null || echo "/$PACK_DIR/" >>.git/info/exclude
    echo "wrote $PACK_DIR/site-packages.tar.xz ($(du -h "$PACK_DIR/site-packages.tar.xz" | cut -f1)); carry $PACK_DIR"
}

use_pack() {
    local unpacked=/tmp/spanbert_lib_gpu_check site_packages
    mkdir -p "$unpacked"
    [ -d "$unpacked/site" ] || tar -xJf "$PACK_DIR/site-packages.tar.xz" -C "$unpacked"
    export PYTHONPATH="$unpacked/site:$PWD" HF_HUB_OFFLINE=1
    # allennlp needs spanbert_lib.compat's import hook before it loads: a .pth file in the image's site-packages
    site_packages=$(python3 -c "import site; print(site.getsitepackages()[0])")
    echo "import spanbert_lib.compat; spanbert_lib.compat.install()" >"$site_packages/spanbert_lib_compat.pth"
}

run() {
    local out=${OUT:-outputs/gpu_check} rc=0
    mkdir -p "$out"
    use_pack
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
    python3 -m pytest -q -p no:cacheprovider -n "${GPU_CHECK_WORKERS:-6}" tests/test_gpu.py tests/test_mixed_precision.py \
        --junitxml="$out/gpu_check.xml" >"$out/gpu_check.log" 2>&1 || rc=$?
    grep -E "^(FAILED|ERROR)|^E " "$out/gpu_check.log" | cut -c1-300 | head -40 || true
    tail -1 "$out/gpu_check.log"
    return $rc
}

case "${1:-}" in
    pack) pack ;;
    run) run ;;
    python)
        shift
        use_pack
        python3 "$@"
        ;;
    *)
        echo "usage: bash scripts/gpu_check.sh pack|run|python ARGS..." >&2
        exit 2
        ;;
esac
