// Package catalog holds the embedded GPU and model-architecture catalogs
// (data files with their sources) and name lookup with "did you mean".
// The GPU side lives in the gpu*.go files, the model side in the others.
package catalog
