package catalog

import (
	_ "embed"
	"encoding/csv"
	"strings"
)

// Published quantised checkpoints: the repos a serving answer can name
// when it proposes 4-bit or FP8 weights ("vllm serve Qwen/Qwen3-32B-AWQ")
// instead of a quantisation at load. Each row is a checkpoint of exactly
// that model (an instruct model's for the instruct model), with its
// source; a model without one gets the format named, never a made-up repo.

//go:embed checkpoints.csv
var checkpointsCSV string

// Checkpoint formats of checkpoints.csv.
const (
	CheckpointAWQ = "awq"
	CheckpointFP8 = "fp8"
)

// checkpoints maps a model's Hub id (lower case) and a format to the
// published checkpoint's repo.
var checkpoints = func() map[[2]string]string {
	rows, err := csv.NewReader(strings.NewReader(checkpointsCSV)).ReadAll()
	if err != nil || len(rows) == 0 {
		panic("catalog: checkpoints.csv: " + errString(err))
	}
	out := map[[2]string]string{}
	for _, r := range rows[1:] {
		if len(r) != 4 || r[0] == "" || r[2] == "" || r[3] == "" || (r[1] != CheckpointAWQ && r[1] != CheckpointFP8) {
			panic("catalog: checkpoints.csv: a row needs model, format (awq or fp8), checkpoint and source: " + strings.Join(r, ","))
		}
		out[[2]string{strings.ToLower(r[0]), r[1]}] = r[2]
	}
	return out
}()

func errString(err error) string {
	if err == nil {
		return "empty"
	}
	return err.Error()
}

// PublishedCheckpoint is the published checkpoint of the model with Hub
// id hfID in format (CheckpointAWQ, CheckpointFP8), if one is known.
func PublishedCheckpoint(hfID, format string) (string, bool) {
	repo, ok := checkpoints[[2]string{strings.ToLower(hfID), format}]
	return repo, ok
}
