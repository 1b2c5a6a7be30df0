//go:build race

package prom

// raceOn: the race detector slows the 10,000-GPU read tenfold.
const raceOn = true
