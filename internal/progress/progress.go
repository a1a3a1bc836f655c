// Package progress draws the live progress bars of writ's long-running
// work (audit, export, import, publish, sync) on stderr: the count, the
// rate and the time left, drawn only for work that runs longer than a
// second on a terminal (or always, or never, as $WRIT_PROGRESS says),
// and cleared when the work is done so that the result line stands
// alone. One bar is on screen at a time; Clear clears it before a
// diagnostic or an error is printed.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/writ-ledger/writ/internal/fileio"
	"github.com/writ-ledger/writ/ledger/progress"
)

// Delay is how long work runs before its bar appears on a terminal:
// work that ends sooner draws nothing.
const Delay = time.Second

// Mode reads WRIT_PROGRESS: "1" draws every bar at once, on any stderr
// (as git's --progress); "0" never draws one; anything else (the
// default) draws one on a terminal once the work has run for Delay.
func Mode(stderr io.Writer) (draw bool, delay time.Duration) {
	switch os.Getenv("WRIT_PROGRESS") {
	case "1":
		return true, 0
	case "0":
		return false, 0
	}
	return fileio.IsTerminal(stderr), Delay
}

// For returns a progress.Func that draws a live bar on stderr, with
// the rate and the time left, for the work called what, counted in unit
// ("entries", "tiles" or "bytes"), or nil when no bar is to be drawn
// (see Mode). The bar is cleared when the work is done; work that starts
// again (a sync under --watch) gets a new bar. The returned function is
// called from one goroutine at a time.
func For(stderr io.Writer, what, unit string) progress.Func {
	draw, delay := Mode(stderr)
	if !draw {
		return nil
	}
	var bar *progressbar.ProgressBar
	var last int64
	ended := false // the last bar finished: a repeated end draws nothing
	return func(done, total int64) {
		if total <= 0 {
			return
		}
		if bar != nil && done < last {
			// The work started again (a sync retried under --watch
			// after a failure): a new bar, with its own rate.
			Clear()
			bar = nil
		}
		last = done
		if bar == nil {
			if done >= total && (ended || delay > 0) {
				return
			}
			ended = false
			bar = newBar(stderr, what, unit, total, delay)
			setLive(bar)
		}
		if bar.GetMax64() != total {
			bar.ChangeMax64(total)
		}
		_ = bar.Set64(done)
		if done >= total {
			_ = bar.Finish()
			setLive(nil)
			bar, ended = nil, true
		}
	}
}

// newBar starts a bar of total units on stderr, drawn from delay on.
func newBar(stderr io.Writer, what, unit string, total int64, delay time.Duration) *progressbar.ProgressBar {
	opts := []progressbar.Option{progressbar.OptionSetWriter(&gate{w: stderr, from: time.Now().Add(delay)}),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200 * time.Millisecond),
		progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30)}
	if unit == "bytes" {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionSetItsString(unit), progressbar.OptionShowIts())
	}
	if delay == 0 {
		// A forced bar (WRIT_PROGRESS=1) shows at least its first
		// frame, whatever the throttle lets through.
		opts = append(opts, progressbar.OptionSetRenderBlankState(true))
	}
	bar := progressbar.NewOptions64(total, opts...)
	bar.StartWithoutRender() // the rate counts from here
	return bar
}

// live is the bar on screen, if any: a diagnostic or an error clears it
// first, so that its line never runs into the bar's.
var live struct {
	sync.Mutex
	bar *progressbar.ProgressBar
}

func setLive(bar *progressbar.ProgressBar) {
	live.Lock()
	live.bar = bar
	live.Unlock()
}

// Clear clears the bar on screen, if any; work that goes on draws it
// again at its next frame. It is safe for concurrent use.
func Clear() {
	live.Lock()
	defer live.Unlock()
	if live.bar != nil {
		_ = live.bar.Clear()
	}
}

// gate drops what is written to it before from: the frames of work that
// has not yet run long enough to deserve a bar (its clearing included).
type gate struct {
	w    io.Writer
	from time.Time
}

func (g *gate) Write(p []byte) (int, error) {
	if time.Now().Before(g.from) {
		return len(p), nil
	}
	return g.w.Write(p)
}
