// RBAC derived from the code. scanProcess reads the C sources of one process
// and returns every API call its code can make, as (group, resource[/sub],
// verb):
//
//   - resource descriptors are the { "group", "version", "plural", 0|1 }
//     initialisers of struct k8s_resource (alone or in tables), by variable;
//   - the verb primitives are common/'s API functions (k8s_get, k8s_get_until: get, k8s_list,
//     k8s_list_all, pager_list, pager_list_object: list, k8s_watch: watch,
//     k8s_create: create, k8s_update: update, k8s_patch: patch, k8s_delete:
//     delete) and an informer's ".res =" option, or a watch table's ".res = {...}"
//     (list and watch);
//   - a function that passes one of its own parameters (a descriptor, or a
//     struct holding one) to a primitive (or to such a function) becomes a
//     primitive for that parameter position, to a fixed point;
//   - a function returning a struct k8s_resource pointer stands for every
//     descriptor it (or a function of its file it names) mentions;
//   - subresources come from a literal subresource argument of k8s_get, or
//     the write options of k8s_update/k8s_patch (a compound literal, or the
//     variable's ".subresource = \"x\"" in the calling function);
//   - only functions reachable from the process's main() count; a function
//     is reached when its name appears in a reached function or in the
//     initialiser of a reached variable (calls and function pointers alike).
//
// checkRBAC compares that set with the rules the rendered manifests grant to
// the process's ServiceAccount: every call must be allowed, every granted
// (group, resource, verb) must be a call. checkAudit replays the requests
// kube-sim logged (-v) through an RBAC evaluator of the rendered manifests.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

type call struct{ group, resource, verb string }

func (c call) String() string {
	g := c.group
	if g == "" {
		g = "core"
	}
	return g + " " + c.resource + " " + c.verb
}

type cfunc struct {
	name, file string
	static     bool
	params     []string // parameter names
	resParams  map[int]bool
	body       string
	returnsRes bool
}

var (
	reComment   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	reTuple     = regexp.MustCompile(`\{\s*"([a-z0-9.\-]*)"\s*,\s*"(v[0-9]+(?:(?:alpha|beta)[0-9]+)?)"\s*,\s*"([a-z0-9]+)"\s*,\s*[01]\s*\}`)
	reVarDecl   = regexp.MustCompile(`(\w+)\s*(?:\[[^\]]*\])?\s*=\s*\{`)
	reIdent     = regexp.MustCompile(`[A-Za-z_]\w*`)
	reSubLit    = regexp.MustCompile(`\.subresource\s*=\s*"(\w+)"`)
	reResOption = regexp.MustCompile(`\.res\s*=\s*([^;,}]+)`)
	reResTuple  = regexp.MustCompile(`\.res\s*=\s*(\{[^{}]*\})`)
	reFuncHead  = regexp.MustCompile(`(?s)([A-Za-z_]\w*)\s*\(([^()]*)\)\s*$`)
)

var primitives = map[string][]string{
	"k8s_get": {"get"}, "k8s_get_until": {"get"}, "k8s_list": {"list"}, "k8s_list_all": {"list"},
	"pager_list": {"list"}, "pager_list_object": {"list"}, "k8s_watch": {"watch"},
	"k8s_create": {"create"}, "k8s_update": {"update"}, "k8s_patch": {"patch"},
	"k8s_delete": {"delete"},
}

// optsSubresource: the subresource a k8s_write_opts argument ("&wo",
// "NULL", a compound literal) sets, from the argument itself or from the
// variable's initialiser or assignment in the calling function's body.
func optsSubresource(body, arg string) string {
	if m := reSubLit.FindStringSubmatch(arg); m != nil {
		return m[1]
	}
	v := regexp.MustCompile(`^&?\s*([A-Za-z_]\w*)$`).FindStringSubmatch(strings.TrimSpace(arg))
	if v == nil {
		return ""
	}
	re := regexp.MustCompile(`\b` + v[1] + `\s*=\s*\{[^;]*?\.subresource\s*=\s*"(\w+)"|\b` +
		v[1] + `\.subresource\s*=\s*"(\w+)"`)
	if m := re.FindStringSubmatch(body); m != nil {
		return m[1] + m[2]
	}
	return ""
}

// splitArgs splits the text of a call's arguments at top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	inStr := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inStr:
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inStr = false
			}
		case ch == '"':
			inStr = true
		case ch == '(' || ch == '{' || ch == '[':
			depth++
		case ch == ')' || ch == '}' || ch == ']':
			depth--
		case ch == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// calls finds "name(args)" in body for the given names; returns name and args.
func calls(body string, names map[string]bool) [][2]string {
	var out [][2]string
	for _, loc := range regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`).FindAllStringSubmatchIndex(body, -1) {
		n := body[loc[2]:loc[3]]
		if !names[n] {
			continue
		}
		depth := 1
		i := loc[1]
		for ; i < len(body) && depth > 0; i++ {
			switch body[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		out = append(out, [2]string{n, body[loc[1] : i-1]})
	}
	return out
}

// parseC returns the functions and resource descriptors of one file.
func parseC(file, text string, descs map[string][]call) []*cfunc {
	text = reComment.ReplaceAllString(text, " ")
	var funcs []*cfunc
	depth := 0
	declStart := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(text) && text[i] != '\''; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case ';':
			if depth == 0 {
				declStart = i + 1
			}
		case '{':
			if depth == 0 {
				head := text[declStart:i]
				end := matchBrace(text, i)
				block := text[i:end]
				if m := reFuncHead.FindStringSubmatch(head); m != nil && !strings.Contains(head, "=") {
					f := &cfunc{name: m[1], file: file, static: strings.Contains(head, "static"),
						resParams: map[int]bool{}, body: block,
						returnsRes: strings.Contains(head[:strings.LastIndex(head, m[1])], "k8s_resource")}
					for pi, p := range splitArgs(m[2]) {
						ids := reIdent.FindAllString(p, -1)
						if len(ids) > 0 {
							f.params = append(f.params, ids[len(ids)-1])
						}
						if strings.Contains(p, "k8s_resource") {
							f.resParams[pi] = true
						}
					}
					funcs = append(funcs, f)
				} else if m := reVarDecl.FindStringSubmatch(head + "{"); m != nil {
					for _, t := range reTuple.FindAllStringSubmatch(block, -1) {
						descs[m[1]] = append(descs[m[1]], call{group: t[1], resource: t[3]})
					}
					// a table of function pointers reaches what it names once
					// the variable is reached
					funcs = append(funcs, &cfunc{name: m[1], file: file,
						static: strings.Contains(head, "static"), resParams: map[int]bool{},
						body: block})
				}
				i = end - 1
				declStart = end
				if end < len(text) && text[end] == ';' {
					declStart = end + 1
				}
			}
		}
	}
	return funcs
}

func matchBrace(text string, open int) int {
	depth := 0
	for i := open; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(text) && text[i] != '\''; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(text)
}

type wrapper struct {
	verbs map[string]bool // "verb" or "verb/sub"
}

// process: NAME=SA:DIR[,DIR]...; SA is namespace/name.
type process struct {
	name, sa string
	dirs     []string
}

func parseProcess(spec string) (process, error) {
	kv := strings.SplitN(spec, "=", 2)
	if len(kv) != 2 || !strings.Contains(kv[1], ":") {
		return process{}, fmt.Errorf("--process wants NAME=NS/SA:DIR[,DIR...], got %q", spec)
	}
	sd := strings.SplitN(kv[1], ":", 2)
	return process{name: kv[0], sa: sd[0], dirs: strings.Split(sd[1], ",")}, nil
}

// scanProcess returns the API calls of the process whose sources are dirs
// (relative to src), skipping files named in without; main() must be in dirs[0].
func scanProcess(src string, p process, without []string) (map[call]string, error) {
	descs := map[string][]call{}
	var funcs []*cfunc
	skip := map[string]bool{}
	for _, w := range without {
		skip[filepath.Clean(w)] = true
	}
	for _, d := range p.dirs {
		for _, pat := range []string{"*.c", "*.h"} {
			files, _ := filepath.Glob(filepath.Join(src, d, pat))
			for _, f := range files {
				rel, _ := filepath.Rel(src, f)
				if skip[rel] {
					continue
				}
				b, err := os.ReadFile(f)
				if err != nil {
					return nil, err
				}
				funcs = append(funcs, parseC(rel, string(b), descs)...)
			}
		}
	}
	byName := map[string][]*cfunc{}
	for _, f := range funcs {
		byName[f.name] = append(byName[f.name], f)
	}
	// A function returning a struct k8s_resource pointer stands for every
	// descriptor its body (or a function of its file it names) mentions.
	for _, f := range funcs {
		if !f.returnsRes {
			continue
		}
		seen := map[*cfunc]bool{f: true}
		todo := []*cfunc{f}
		for len(todo) > 0 {
			g := todo[0]
			todo = todo[1:]
			for _, id := range reIdent.FindAllString(g.body, -1) {
				if d, ok := descs[id]; ok && id != f.name {
					descs[f.name] = append(descs[f.name], d...)
				}
				for _, h := range byName[id] {
					if h.file == f.file && !seen[h] {
						seen[h] = true
						todo = append(todo, h)
					}
				}
			}
		}
	}
	// resolve: the function a name means inside file.
	resolve := func(name, file string) []*cfunc {
		var local, global []*cfunc
		for _, f := range byName[name] {
			if f.file == file {
				local = append(local, f)
			} else if !f.static {
				global = append(global, f)
			}
		}
		if len(local) > 0 {
			return local
		}
		return global
	}
	// reachability from main in dirs[0]
	reached := map[*cfunc]bool{}
	var queue []*cfunc
	for _, f := range byName["main"] {
		if filepath.Dir(f.file) == filepath.Clean(p.dirs[0]) {
			reached[f] = true
			queue = append(queue, f)
		}
	}
	if len(queue) == 0 {
		return nil, fmt.Errorf("%s: no main() in %s", p.name, p.dirs[0])
	}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for _, id := range reIdent.FindAllString(f.body, -1) {
			if id == "main" {
				continue // never called: a string naming etcd-main reaches no other process's main
			}
			for _, g := range resolve(id, f.file) {
				if !reached[g] {
					reached[g] = true
					queue = append(queue, g)
				}
			}
		}
	}
	// wrappers: function -> param index -> verbs, to a fixed point
	wraps := map[*cfunc]map[int]map[string]bool{}
	found := map[call]string{}
	verbsOf := func(f *cfunc, name, args string) (map[int]map[string]bool, bool) {
		if v, ok := primitives[name]; ok {
			m := map[string]bool{}
			a := splitArgs(args)
			sub := ""
			if s := reSubLit.FindStringSubmatch(args); s != nil {
				sub = s[1]
			}
			if (name == "k8s_get" || name == "k8s_get_until") && len(a) > 4 && strings.HasPrefix(a[4], "\"") {
				sub = strings.Trim(a[4], "\"")
			}
			optsAt := map[string]int{"k8s_update": 5, "k8s_patch": 6}
			if at, ok := optsAt[name]; ok && sub == "" && at < len(a) {
				sub = optsSubresource(f.body, a[at])
			}
			for _, verb := range v {
				if sub != "" {
					m[verb+"/"+sub] = true
				} else {
					m[verb] = true
				}
			}
			return map[int]map[string]bool{1: m}, true
		}
		return nil, false
	}
	for changed := true; changed; {
		changed = false
		for f := range reached {
			add := func(argText string, verbs map[string]bool) {
				for _, id := range reIdent.FindAllString(argText, -1) {
					if d, ok := descs[id]; ok {
						for _, c := range d {
							for v := range verbs {
								parts := strings.SplitN(v, "/", 2)
								cc := c
								cc.verb = parts[0]
								if len(parts) == 2 {
									cc.resource += "/" + parts[1]
								}
								if _, seen := found[cc]; !seen {
									found[cc] = f.file + ":" + f.name
									changed = true
								}
							}
						}
					}
					for pi := range f.params {
						if f.params[pi] == id {
							if wraps[f] == nil {
								wraps[f] = map[int]map[string]bool{}
							}
							if wraps[f][pi] == nil {
								wraps[f][pi] = map[string]bool{}
							}
							for v := range verbs {
								if !wraps[f][pi][v] {
									wraps[f][pi][v] = true
									changed = true
								}
							}
						}
					}
				}
			}
			names := map[string]bool{}
			for n := range primitives {
				names[n] = true
			}
			for g := range wraps {
				names[g.name] = true
			}
			for _, c := range calls(f.body, names) {
				if pv, ok := verbsOf(f, c[0], c[1]); ok {
					a := splitArgs(c[1])
					if len(a) > 1 {
						add(a[1], pv[1])
					}
					continue
				}
				for _, g := range resolve(c[0], f.file) {
					a := splitArgs(c[1])
					for pi, verbs := range wraps[g] {
						if pi < len(a) {
							add(a[pi], verbs)
						}
					}
				}
			}
			for _, m := range reResOption.FindAllStringSubmatch(f.body, -1) {
				add(m[1], map[string]bool{"list": true, "watch": true})
			}
			// a watch table's ".res = { ... }" (struct ctl_watch of the controller's ctl_cap.h)
			for _, m := range reResTuple.FindAllStringSubmatch(f.body, -1) {
				if t := reTuple.FindStringSubmatch(m[1]); t != nil {
					for _, v := range []string{"list", "watch"} {
						cc := call{group: t[1], resource: t[3], verb: v}
						if _, seen := found[cc]; !seen {
							found[cc] = f.file + ":" + f.name
							changed = true
						}
					}
				}
			}
		}
	}
	return found, nil
}

// rule evaluation ------------------------------------------------------

type grant struct {
	ns    string // "" = every namespace (ClusterRoleBinding)
	rules []interface{}
}

// grantsOf returns the rules bound to ServiceAccount ns/name.
func grantsOf(all []obj, sa string) []grant {
	var out []grant
	for _, b := range all {
		k := str(b, "kind")
		if k != "ClusterRoleBinding" && k != "RoleBinding" {
			continue
		}
		bound := false
		for _, s := range list(b, "subjects") {
			if str(s, "kind") == "ServiceAccount" && str(s, "namespace")+"/"+str(s, "name") == sa {
				bound = true
			}
		}
		if !bound {
			continue
		}
		rns := ""
		if str(b, "roleRef.kind") == "Role" {
			rns = str(b, "metadata.namespace")
		}
		role := find(all, "rbac.authorization.k8s.io/v1", str(b, "roleRef.kind"), rns, str(b, "roleRef.name"))
		if role == nil {
			continue
		}
		g := grant{rules: list(role, "rules")}
		if k == "RoleBinding" {
			g.ns = str(b, "metadata.namespace")
		}
		out = append(out, g)
	}
	return out
}

func has(l []interface{}, v string) bool {
	for _, x := range l {
		if x == v || x == "*" {
			return true
		}
	}
	return false
}

// allowed: does any grant allow verb on group/resource (ns "" for a
// cluster-scoped object, name "" when the request names none)?
func allowed(gs []grant, c call, ns, name string, clusterScoped bool) bool {
	for _, g := range gs {
		if g.ns != "" && (clusterScoped || ns != g.ns) {
			continue
		}
		for _, r := range g.rules {
			if !has(list(r, "apiGroups"), c.group) || !has(list(r, "resources"), c.resource) ||
				!has(list(r, "verbs"), c.verb) {
				continue
			}
			rn := list(r, "resourceNames")
			if len(rn) == 0 || (name != "" && has(rn, name)) {
				return true
			}
		}
	}
	return false
}

// granted lists the (group, resource, verb) triples the grants name.
func granted(gs []grant) map[call]bool {
	out := map[call]bool{}
	for _, g := range gs {
		for _, r := range g.rules {
			for _, gr := range list(r, "apiGroups") {
				for _, res := range list(r, "resources") {
					for _, v := range list(r, "verbs") {
						out[call{fmt.Sprint(gr), fmt.Sprint(res), fmt.Sprint(v)}] = true
					}
				}
			}
		}
	}
	return out
}

func sortedCalls(m map[call]string) []call {
	var out []call
	for c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func printScan(src string, procs []string) error {
	for _, ps := range procs {
		p, err := parseProcess(ps)
		if err != nil {
			return err
		}
		found, err := scanProcess(src, p, nil)
		if err != nil {
			return err
		}
		fmt.Printf("%s (%s):\n", p.name, p.sa)
		for _, c := range sortedCalls(found) {
			fmt.Printf("  %-60s %s\n", c, found[c])
		}
	}
	return nil
}

func checkRBAC(path, src string, procs, without []string) error {
	all, err := loadManifests(path)
	if err != nil {
		return err
	}
	var errs []string
	for _, ps := range procs {
		p, err := parseProcess(ps)
		if err != nil {
			return err
		}
		found, err := scanProcess(src, p, without)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			errs = append(errs, p.name+": the scan found no API call at all")
		}
		gs := grantsOf(all, p.sa)
		for _, c := range sortedCalls(found) {
			ok := false
			for _, g := range gs {
				for _, r := range g.rules {
					if has(list(r, "apiGroups"), c.group) && has(list(r, "resources"), c.resource) &&
						has(list(r, "verbs"), c.verb) {
						ok = true
					}
				}
			}
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: the code calls %s (%s) but %s may not", p.name, c, found[c], p.sa))
			}
		}
		for c := range granted(gs) {
			if _, ok := found[c]; !ok {
				errs = append(errs, fmt.Sprintf("%s: %s is granted %s, which its code never calls", p.name, p.sa, c))
			}
		}
		fmt.Printf("rbac: %s: %d API calls in the code, each granted, nothing more\n", p.name, len(found))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}
