// The dynamic half of the RBAC check: kube-sim -v logs one JSON line per
// request (method, path, watch, code, user). checkAudit replays every request
// of a process's ServiceAccount through an RBAC evaluator of the rendered
// manifests (namespaces, ClusterRole/Role bindings, resourceNames) and
// checks that the static scan of the process's code predicted it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// clusterScoped resources of the API groups the processes call.
var clusterScoped = map[string]bool{
	"namespaces": true, "validatingwebhookconfigurations": true,
	"mutatingwebhookconfigurations": true, "customresourcedefinitions": true,
	"clusterroles": true, "clusterrolebindings": true, "nodes": true,
}

type request struct {
	user, method, path string
	watch              bool
	c                  call
	ns, name           string
}

// parsePath maps an API path to group, resource[/sub], namespace and name;
// ok is false for non-resource paths (discovery, /version, ...).
func parsePath(p string) (group, res, ns, name string, ok bool) {
	seg := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(seg) >= 3 && seg[0] == "api":
		seg = seg[2:]
	case len(seg) >= 4 && seg[0] == "apis":
		group = seg[1]
		seg = seg[3:]
	default:
		return "", "", "", "", false
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		ns = seg[1]
		seg = seg[2:]
	}
	if len(seg) == 0 {
		return "", "", "", "", false
	}
	res = seg[0]
	if len(seg) >= 2 {
		name = seg[1]
	}
	if len(seg) >= 3 {
		res += "/" + seg[2]
	}
	return group, res, ns, name, true
}

func verbOf(method, name string, watch bool) string {
	switch method {
	case "GET":
		if watch {
			return "watch"
		}
		if name == "" {
			return "list"
		}
		return "get"
	case "POST":
		return "create"
	case "PUT":
		return "update"
	case "PATCH":
		return "patch"
	case "DELETE":
		if name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(method)
}

func readAudit(path string) ([]request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l map[string]string
		if json.Unmarshal(sc.Bytes(), &l) != nil || l["msg"] != "request" {
			continue
		}
		g, res, ns, name, ok := parsePath(l["path"])
		if !ok {
			continue
		}
		w := l["watch"] == "1" || l["watch"] == "true"
		out = append(out, request{user: l["user"], method: l["method"], path: l["path"],
			watch: w, c: call{g, res, verbOf(l["method"], name, w)}, ns: ns, name: name})
	}
	return out, sc.Err()
}

// checkAudit: every logged request of each process's ServiceAccount is
// allowed by the rendered RBAC and predicted by the scan of its code.
func checkAudit(manifests, logPath, src string, procs []string) error {
	all, err := loadManifests(manifests)
	if err != nil {
		return err
	}
	reqs, err := readAudit(logPath)
	if err != nil {
		return err
	}
	var errs []string
	for _, ps := range procs {
		p, err := parseProcess(ps)
		if err != nil {
			return err
		}
		found, err := scanProcess(src, p, nil)
		if err != nil {
			return err
		}
		user := "system:serviceaccount:" + strings.Replace(p.sa, "/", ":", 1)
		gs := grantsOf(all, p.sa)
		seen := map[call]int{}
		n := 0
		for _, r := range reqs {
			if r.user != user {
				continue
			}
			n++
			seen[r.c]++
			base := strings.SplitN(r.c.resource, "/", 2)[0]
			if !allowed(gs, r.c, r.ns, r.name, clusterScoped[base]) {
				errs = append(errs, fmt.Sprintf("%s: %s %s (%s) is not allowed to %s", p.name, r.method, r.path, r.c, p.sa))
			}
			if _, ok := found[r.c]; !ok {
				errs = append(errs, fmt.Sprintf("%s: %s %s (%s) was not found by the scan of its code", p.name, r.method, r.path, r.c))
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Sprintf("%s: no request of %s in %s", p.name, user, logPath))
		}
		var kinds []string
		for c, k := range seen {
			kinds = append(kinds, fmt.Sprintf("%s x%d", c, k))
		}
		sort.Strings(kinds)
		fmt.Printf("audit: %s: %d requests, %d of the %d calls the scan found: %s\n", p.name, n,
			len(seen), len(found), strings.Join(kinds, ", "))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(dedup(errs), "\n  "))
	}
	return nil
}

func dedup(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
