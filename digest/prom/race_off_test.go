//go:build !race

package prom

const raceOn = false
