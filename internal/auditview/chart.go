package auditview

import (
	"math"

	"github.com/writ-ledger/writ/internal/humanize"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/verify/audit"
)

// Chart geometry, in SVG user units (the SVG scales to the page).
const (
	chartW, chartH     = 720, 250
	plotL, plotT       = 70, 16   // left and top of the plot area
	plotW, plotH       = 642, 180 // its width and height
	maxChartLabels     = 8        // day labels under the bars, at most
	valueLabelMinWidth = 16       // a bar this wide or wider carries its total
)

// segment is one verdict's part of a day's bar.
type segment struct {
	Class   string
	Verdict schemas.Verdict
	Y, H    float64
	N       int64
}

// dayBar is one day of the stacked chart.
type dayBar struct {
	Day, Label   string
	X, W, LabelX float64
	Total        int64
	TotalY       float64
	ShowTotal    bool
	Partial      bool
	Segments     []segment
}

// axisTick is a labelled value of the chart's vertical axis.
type axisTick struct {
	Y     float64
	Label string
}

// axisStep is the step between the vertical axis's ticks for a busiest
// day of top decisions: a whole 1, 2 or 5 times a power of ten, giving at
// most five steps up to the tick at or above top.
func axisStep(top int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if step := m * p; top <= 5*step || p > math.MaxInt64/100 {
				return step
			}
		}
	}
}

// stackedChart lays out the days as stacked bars (admitted,
// admitted-unsigned, would-refuse, refused from the bottom), scaled so the
// highest tick of the vertical axis (whole numbers, see axisStep) fills
// the plot, with at most maxChartLabels day labels (MM-DD) and each bar's
// total above it when the bar is wide enough.
func stackedChart(days []audit.DayCount) ([]dayBar, []axisTick) {
	var top int64
	for _, d := range days {
		top = max(top, d.Decisions)
	}
	step := axisStep(top)
	axisTop := max((top+step-1)/step, 1) * step
	scale := plotH / float64(axisTop)
	n := max(len(days), 1)
	slot := float64(plotW) / float64(n)
	every := int(math.Ceil(float64(n) / maxChartLabels))
	bars := make([]dayBar, 0, len(days))
	for i, d := range days {
		x := plotL + slot*float64(i) + slot*0.15
		b := dayBar{Day: d.Day, X: x, W: slot * 0.7, LabelX: x + slot*0.35, Total: d.Decisions, Partial: d.Partial,
			ShowTotal: slot >= valueLabelMinWidth && d.Decisions > 0}
		if i%every == 0 && len(d.Day) == 10 {
			b.Label = d.Day[5:]
		}
		y := float64(plotT + plotH)
		for _, s := range []segment{
			{Class: "admitted", Verdict: schemas.VerdictAdmitted, N: d.ByVerdict.Admitted},
			{Class: "unsigned", Verdict: schemas.VerdictAdmittedUnsigned, N: d.ByVerdict.AdmittedUnsigned},
			{Class: "would", Verdict: schemas.VerdictWouldRefuse, N: d.ByVerdict.WouldRefuse},
			{Class: "refused", Verdict: schemas.VerdictRefused, N: d.ByVerdict.Refused},
		} {
			if s.N == 0 {
				continue
			}
			s.H = float64(s.N) * scale
			y -= s.H
			s.Y = y
			b.Segments = append(b.Segments, s)
		}
		b.TotalY = y - 3
		bars = append(bars, b)
	}
	var ticks []axisTick
	for v := int64(0); v <= axisTop; v += step {
		ticks = append(ticks, axisTick{Y: plotT + plotH - float64(v)*scale, Label: humanize.Thousands(v)})
	}
	return bars, ticks
}
