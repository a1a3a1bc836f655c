package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/writ-ledger/writ/ledger"
)

// progressDelay is how long work runs before its bar appears on a
// terminal: work that ends sooner draws nothing.
const progressDelay = time.Second

// progressMode reads WRIT_PROGRESS: "1" draws every bar at once, on
// any stderr (as git's --progress); "0" never draws one; anything else
// (the default) draws one on a terminal once the work has run for
// progressDelay.
func progressMode(stderr io.Writer) (draw bool, delay time.Duration) {
	switch os.Getenv("WRIT_PROGRESS") {
	case "1":
		return true, 0
	case "0":
		return false, 0
	}
	return isTerminal(stderr), progressDelay
}

// progressFor returns a ledger.Progress that draws a live bar on stderr,
// with the rate and the time left, for the work called what, counted in
// unit ("entries", "tiles" or "bytes"), or nil when no bar is to be
// drawn (see progressMode). The bar is cleared when the work is done, so
// that the result line stands alone; work that starts again (a sync
// under --watch) gets a new bar.
func progressFor(c *cli.Context, what, unit string) ledger.Progress {
	draw, delay := progressMode(c.App.ErrWriter)
	if !draw || wantJSON(c) {
		return nil // under --json stderr carries JSON objects only
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
			clearProgress()
			bar = nil
		}
		last = done
		if bar == nil {
			if done >= total && (ended || delay > 0) {
				return
			}
			ended = false
			opts := []progressbar.Option{progressbar.OptionSetWriter(&gate{w: c.App.ErrWriter, from: time.Now().Add(delay)}),
				progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200 * time.Millisecond),
				progressbar.OptionClearOnFinish(), progressbar.OptionSetWidth(30)}
			if unit == "bytes" {
				opts = append(opts, progressbar.OptionShowBytes(true))
			} else {
				opts = append(opts, progressbar.OptionSetItsString(unit), progressbar.OptionShowIts())
			}
			if delay == 0 {
				// A forced bar (WRIT_PROGRESS=1) shows at least its
				// first frame, whatever the throttle lets through.
				opts = append(opts, progressbar.OptionSetRenderBlankState(true))
			}
			bar = progressbar.NewOptions64(total, opts...)
			bar.StartWithoutRender() // the rate counts from here
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

// clearProgress clears the bar on screen, if any; work that goes on
// draws it again at its next frame.
func clearProgress() {
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
