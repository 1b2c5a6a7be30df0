package chart

import (
	"sort"
	"time"

	"gonum.org/v1/plot"
)

// clockTicks puts time-axis ticks on whole local hours (every 1, 2, 3, 6 or
// 12 h) or midnights, at most about eight of them, instead of gonum's
// ticks at arbitrary seconds.
type clockTicks struct{ loc *time.Location }

func (c clockTicks) Ticks(lo, hi float64) []plot.Tick {
	start, end := time.Unix(int64(lo), 0).In(c.loc), time.Unix(int64(hi), 0).In(c.loc)
	span := end.Sub(start)
	every := 24 * time.Hour
	for _, h := range []int{1, 2, 3, 6, 12} {
		if span/(time.Duration(h)*time.Hour) <= 8 {
			every = time.Duration(h) * time.Hour
			break
		}
	}
	days := 1
	for every == 24*time.Hour && span/(time.Duration(days)*24*time.Hour) > 8 {
		days++
	}
	format := "Mon 15:04"
	if every == 24*time.Hour {
		format = "Mon 2 Jan"
	}
	var ticks []plot.Tick
	t := time.Date(start.Year(), start.Month(), start.Day(), start.Hour(), 0, 0, 0, c.loc)
	for ; !t.After(end); t = t.Add(time.Hour) {
		if t.Before(start) {
			continue
		}
		onTick := every < 24*time.Hour && t.Hour()%int(every.Hours()) == 0 && t.Minute() == 0
		onDay := every == 24*time.Hour && t.Hour() == 0 && t.YearDay()%days == 0
		if onTick || onDay {
			ticks = append(ticks, plot.Tick{Value: float64(t.Unix()), Label: t.Format(format)})
		}
	}
	return ticks
}

func sortTimes(ts []time.Time) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
}
