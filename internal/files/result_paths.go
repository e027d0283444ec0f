package files

// ResultPathsAdvice ends the descriptions of the data sources and
// artifacts that read what a command wrote.
const ResultPathsAdvice = "\n\nA read after a re-run must never find the previous run's result: declare the paths the " +
	"producing command writes its results to in its `result_paths`. They are then removed right before every run, so " +
	"a run that ends before writing leaves them missing (an error, or `exists = false` with `allow_missing`) instead " +
	"of showing an earlier run's file."
