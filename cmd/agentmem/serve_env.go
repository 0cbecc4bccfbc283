package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of each flag of serve.
const envPrefix = "AGENTMEM_"

// envName is the environment variable of the flag name: AGENTMEM_ and
// the name in capitals, "-" as "_".
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envInherited are the inherited flags serve also takes from the
// environment (--store has AGENTMEM_STORE of its own).
var envInherited = []string{"timeout"}

// flagsFromEnv sets each flag of cmd not given on the command line from
// its environment variable, when that is set and not empty. A value the flag refuses
// fails with exit 2, naming the variable.
func flagsFromEnv(cmd *cobra.Command) error {
	var err error
	set := func(fl *pflag.Flag) {
		v, ok := os.LookupEnv(envName(fl.Name))
		if !ok || v == "" || fl.Changed || err != nil || fl.Name == "version" {
			return
		}
		if e := fl.Value.Set(v); e != nil {
			err = usagef("%s: $%s=%q: %v", cmd.Name(), envName(fl.Name), v, e)
			return
		}
		fl.Changed = true
		if fl.Annotations == nil {
			fl.Annotations = map[string][]string{}
		}
		fl.Annotations[envAnnotation] = []string{envName(fl.Name)}
	}
	cmd.LocalFlags().VisitAll(set)
	for _, name := range envInherited {
		if fl := cmd.Flags().Lookup(name); fl != nil {
			set(fl)
		}
	}
	return err
}

// envAnnotation marks the flags flagsFromEnv set, so that an error can
// name the variable rather than the flag.
const envAnnotation = "agentmem_env"

// flagName names a flag as the user gave it: --name, or $AGENTMEM_NAME
// when it came from the environment.
func flagName(cmd *cobra.Command, name string) string {
	if fl := cmd.Flags().Lookup(name); fl != nil && fl.Annotations[envAnnotation] != nil {
		return "$" + envName(name)
	}
	return "--" + name
}
