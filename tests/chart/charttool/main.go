// charttool: renders and checks the etcd-warden Helm chart without helm.
//
//	charttool render CHART [--name N] [--namespace NS] [-f values.yaml]... [--set k=v]...
//	    print the manifests, as `helm template N CHART -n NS` would (values
//	    checked against the chart's values.schema.json first, see schema.go)
//	charttool check MANIFESTS [--binary NAME=PATH]... [--api-versions FILE]
//	    every document parses, has a known apiVersion/kind and its required
//	    fields; every flag of a container whose command is one of the named
//	    binaries is one that binary's --help lists
//	charttool rbac MANIFESTS --src DIR [--process NAME=SA:DIR[,DIR]...]... [--without FILE]...
//	    the RBAC each service account gets equals the API calls its process's
//	    code makes (static scan of the C sources)
//	charttool audit MANIFESTS --log KUBE-SIM-LOG --src DIR --process NAME=SA:DIR[,DIR]...
//	    every request kube-sim logged (-v) for the process's service account is
//	    allowed by the rendered RBAC and was predicted by the scan
//	charttool get MANIFESTS KIND NAME PATH
//	    print the value at PATH (dotted, list indexes as numbers) of the object
//	    KIND NAME as JSON (for assertions in shell tests)
//	charttool args MANIFESTS DEPLOYMENT
//	    print the first container's args of a rendered Deployment, one a line
//	charttool values-doc VALUES
//	    every key of a values file is documented by a comment (see valuesdoc.go)
//	charttool scan --src DIR --process NAME=SA:DIR[,DIR]...
//	    print the API calls found for each process
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: charttool render|check|rbac|audit|get|args|values-doc|scan ... (see the header of main.go)")
	os.Exit(2)
}

// flagArgs splits "--key value" pairs from positional arguments; repeated
// keys accumulate.
func flagArgs(args []string) (map[string][]string, []string) {
	flags := map[string][]string{}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' && i+1 < len(args) {
			flags[a] = append(flags[a], args[i+1])
			i++
			continue
		}
		pos = append(pos, a)
	}
	return flags, pos
}

func one(flags map[string][]string, key, def string) string {
	if v := flags[key]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	flags, pos := flagArgs(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "render":
		if len(pos) != 1 {
			usage()
		}
		var out string
		out, err = render(renderOpts{chartDir: pos[0], name: one(flags, "--name", "etcd-warden"),
			namespace:  one(flags, "--namespace", "etcd-warden"),
			valueFiles: flags["-f"], sets: flags["--set"],
			apiVersions: flags["--api-versions"]})
		if err == nil {
			fmt.Print(out)
		}
	case "check":
		if len(pos) != 1 {
			usage()
		}
		err = checkManifests(pos[0], flags["--binary"])
	case "rbac":
		if len(pos) != 1 {
			usage()
		}
		err = checkRBAC(pos[0], one(flags, "--src", "."), flags["--process"], flags["--without"])
	case "audit":
		if len(pos) != 1 {
			usage()
		}
		err = checkAudit(pos[0], one(flags, "--log", ""), one(flags, "--src", "."), flags["--process"])
	case "get":
		if len(pos) != 4 {
			usage()
		}
		err = printValue(pos[0], pos[1], pos[2], pos[3])
	case "args":
		if len(pos) != 2 {
			usage()
		}
		err = printArgs(pos[0], pos[1])
	case "values-doc":
		if len(pos) != 1 {
			usage()
		}
		err = checkValuesDoc(pos[0])
	case "scan":
		err = printScan(one(flags, "--src", "."), flags["--process"])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "charttool:", err)
		os.Exit(1)
	}
}
