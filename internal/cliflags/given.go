package cliflags

import "github.com/urfave/cli/v2"

// Given returns the names among names of the flags the command line set,
// in the order of names: for a rule over several flags ("exactly one of",
// "does not go with"). Strict refuses an empty value, so a string flag
// given is one with a value.
func Given(c *cli.Context, names ...string) []string {
	var set []string
	for _, n := range names {
		if c.IsSet(n) {
			set = append(set, n)
		}
	}
	return set
}
