package badgerfile

import (
	"testing"

	"github.com/dgraph-io/badger/v4"
)

// TestDue: Settle waits exactly when Badger's compactors would compact a
// level now (runCompactor's and pickCompactLevels' rules in Badger v4).
func TestDue(t *testing.T) {
	levels := func(set func([]badger.LevelInfo)) []badger.LevelInfo {
		l := make([]badger.LevelInfo, 7)
		for i := range l {
			l[i].Level = i
		}
		set(l)
		return l
	}
	for _, c := range []struct {
		name   string
		levels []badger.LevelInfo
		want   bool
	}{
		{"nothing due", levels(func([]badger.LevelInfo) {}), false},
		{"level 0 at its table count", levels(func(l []badger.LevelInfo) { l[0].Score, l[0].Adjusted = 1, 0.5 }), true},
		{"level 0 one table short", levels(func(l []badger.LevelInfo) { l[0].Score, l[0].Adjusted = 0.975, 0.975 }), false},
		{"base level over its target", levels(func(l []badger.LevelInfo) { l[4].Score, l[4].Adjusted = 1.1, 1.05 }), true},
		{"over its target, the level below fuller", levels(func(l []badger.LevelInfo) { l[4].Score, l[4].Adjusted = 1.1, 0.9 }), false},
		{"the last level, never compacted for size", levels(func(l []badger.LevelInfo) { l[6].Score, l[6].Adjusted = 3, 3 }), false},
	} {
		if got := Due(c.levels); got != c.want {
			t.Errorf("%s: Due = %v, want %v", c.name, got, c.want)
		}
	}
}
