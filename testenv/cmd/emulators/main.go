// Command emulators installs the emulators' prerequisites and says which
// emulators a module's tests need; scripts/emulators.sh, test.sh and
// bench.sh call it. What it knows comes from package testenv.
//
//	go run ./testenv/cmd/emulators install [postgres] [dynamodb] [firestore] [cosmos]  (default: all)
//	go run ./testenv/cmd/emulators needs MODULE_DIR...   (the emulators their tests name, one a line)
//	go run ./testenv/cmd/emulators paths                 (NAME=value: where the process path finds each one's files)
//
// The cache directory is AGENTMEM_EMULATORS_CACHE, else .cache/emulators
// beside go.work.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"

	"github.com/agentmem/agentmem/testenv"
)

const usage = `usage: emulators install [postgres] [dynamodb] [firestore] [cosmos]
       emulators needs MODULE_DIR...
       emulators paths`

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "[emulators] ERROR:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "install":
		es, err := testenv.ParseEmulators(args[1:]...)
		if err != nil {
			return err
		}
		return testenv.Install(ctx, os.Stderr, es...)
	case "needs":
		var all []testenv.Emulator
		for _, dir := range args[1:] {
			es, err := testenv.Needs(dir)
			if err != nil {
				return err
			}
			for _, e := range es {
				if !slices.Contains(all, e) {
					all = append(all, e)
				}
			}
		}
		for _, e := range testenv.All {
			if slices.Contains(all, e) {
				fmt.Println(e)
			}
		}
		return nil
	case "paths":
		kv, err := testenv.Paths()
		if err != nil {
			return err
		}
		for _, l := range kv {
			fmt.Println(l)
		}
		return nil
	}
	fmt.Fprintln(os.Stderr, usage)
	os.Exit(2)
	return nil
}
