package main

import (
	"github.com/urfave/cli/v2"
	"github.com/writ-ledger/writ/internal/quickstart"
)

func quickstartCommand() *cli.Command {
	return &cli.Command{
		Name:  "quickstart",
		Usage: "run writ's main job end to end on a real binary (this writ executable) in a fresh directory",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "work in `DIR` (must not exist or be empty; default: a new temporary directory)"},
		},
		Action: quickstartAction,
	}
}

// quickstartLine is one line of the story under --json.
type quickstartLine struct {
	Message string `json:"message" doc:"one step of the story, as the text output prints it"`
}

// quickstartAction runs package quickstart's story in --dir (or a new
// temporary directory), each step in-process through run, printing each
// step's line as it is told.
func quickstartAction(c *cli.Context) error {
	dir, err := quickstart.PrepareDir(c.String("dir"))
	if err != nil {
		return err
	}
	_, err = quickstart.Run(quickstart.Options{Dir: dir, Run: run, Say: func(line string) {
		emit(c, quickstartLine{Message: line}, line)
	}})
	return err
}
