// Checks of rendered manifests: YAML, known kinds and their required fields,
// the restricted security settings, references between objects, and the
// flags of each container against its binary's --help.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

type obj = map[string]interface{}

// loadManifests splits a multi-document YAML file and parses every
// non-empty document.
func loadManifests(path string) ([]obj, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []obj
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		empty := true
		for _, l := range strings.Split(doc, "\n") {
			t := strings.TrimSpace(l)
			if t != "" && !strings.HasPrefix(t, "#") {
				empty = false
				break
			}
		}
		if empty {
			continue
		}
		o := obj{}
		if err := yaml.UnmarshalStrict([]byte(doc), &o); err != nil {
			return nil, fmt.Errorf("document %d does not parse: %v\n%s", i, err, doc)
		}
		out = append(out, o)
	}
	return out, nil
}

// get walks a dotted path ("spec.template.spec"); numbers index lists.
func get(o interface{}, path string) interface{} {
	cur := o
	for _, k := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]interface{}:
			cur = c[k]
		case []interface{}:
			var i int
			if _, err := fmt.Sscanf(k, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func str(o interface{}, path string) string {
	s, _ := get(o, path).(string)
	return s
}

func list(o interface{}, path string) []interface{} {
	l, _ := get(o, path).([]interface{})
	return l
}

func present(v interface{}) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []interface{}:
		return len(x) > 0
	case map[string]interface{}:
		return len(x) > 0
	}
	return true
}

// kinds: apiVersion/kind -> namespaced, required fields.
var kinds = map[string]struct {
	namespaced bool
	required   []string
}{
	"v1/ServiceAccount":                               {true, nil},
	"v1/Service":                                      {true, []string{"spec.ports", "spec.selector"}},
	"v1/Secret":                                       {true, nil},
	"apps/v1/Deployment":                              {true, []string{"spec.selector.matchLabels", "spec.template.metadata.labels", "spec.template.spec.containers"}},
	"policy/v1/PodDisruptionBudget":                   {true, []string{"spec.selector"}},
	"networking.k8s.io/v1/NetworkPolicy":              {true, []string{"spec.podSelector.matchLabels", "spec.ingress"}},
	"rbac.authorization.k8s.io/v1/ClusterRole":        {false, []string{"rules"}},
	"rbac.authorization.k8s.io/v1/Role":               {true, []string{"rules"}},
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": {false, []string{"roleRef.kind", "roleRef.name", "roleRef.apiGroup", "subjects"}},
	"rbac.authorization.k8s.io/v1/RoleBinding":        {true, []string{"roleRef.kind", "roleRef.name", "roleRef.apiGroup", "subjects"}},
	"admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": {false, []string{"webhooks"}},
	"admissionregistration.k8s.io/v1/MutatingWebhookConfiguration":   {false, []string{"webhooks"}},
	"apiextensions.k8s.io/v1/CustomResourceDefinition":               {false, []string{"spec.group", "spec.names.plural", "spec.names.kind", "spec.scope", "spec.versions"}},
	"cert-manager.io/v1/Certificate":                                 {true, []string{"spec.secretName", "spec.issuerRef.name"}},
	"cert-manager.io/v1/Issuer":                                      {true, nil},
	"monitoring.coreos.com/v1/ServiceMonitor":                        {true, []string{"spec.selector", "spec.endpoints"}},
	"monitoring.coreos.com/v1/PrometheusRule":                        {true, []string{"spec.groups"}},
	"v1/ConfigMap": {true, []string{"data"}},
}

func key(o obj) string { return str(o, "apiVersion") + "/" + str(o, "kind") }

func find(all []obj, apiVersion, kind, ns, name string) obj {
	for _, o := range all {
		if str(o, "apiVersion") == apiVersion && str(o, "kind") == kind &&
			str(o, "metadata.name") == name && str(o, "metadata.namespace") == ns {
			return o
		}
	}
	return nil
}

// labelsMatch: every selector label is in labels.
func labelsMatch(sel, labels interface{}) bool {
	s, _ := sel.(map[string]interface{})
	l, _ := labels.(map[string]interface{})
	if len(s) == 0 {
		return false
	}
	for k, v := range s {
		if l[k] != v {
			return false
		}
	}
	return true
}

func checkObject(all []obj, o obj) []string {
	var errs []string
	k := key(o)
	def, ok := kinds[k]
	name := str(o, "metadata.name")
	if !ok {
		return []string{fmt.Sprintf("unknown apiVersion/kind %s (%s)", k, name)}
	}
	where := k + " " + name
	if name == "" {
		errs = append(errs, k+": metadata.name missing")
	}
	if def.namespaced != present(get(o, "metadata.namespace")) {
		errs = append(errs, fmt.Sprintf("%s: namespaced is %v but metadata.namespace is %q", where, def.namespaced, str(o, "metadata.namespace")))
	}
	for _, f := range def.required {
		if !present(get(o, f)) {
			errs = append(errs, fmt.Sprintf("%s: %s missing", where, f))
		}
	}
	ns := str(o, "metadata.namespace")
	switch str(o, "kind") {
	case "Deployment":
		errs = append(errs, checkDeployment(where, o)...)
	case "Service", "PodDisruptionBudget":
		sel := get(o, "spec.selector")
		if str(o, "kind") == "PodDisruptionBudget" {
			sel = get(o, "spec.selector.matchLabels")
		}
		hit := false
		for _, d := range all {
			if str(d, "kind") == "Deployment" && str(d, "metadata.namespace") == ns &&
				labelsMatch(sel, get(d, "spec.template.metadata.labels")) {
				hit = true
			}
		}
		if !hit {
			errs = append(errs, where+": its selector matches no Deployment's pods")
		}
	case "ClusterRoleBinding", "RoleBinding":
		rk := str(o, "roleRef.kind")
		rns := ""
		if rk == "Role" {
			rns = ns
		}
		if find(all, "rbac.authorization.k8s.io/v1", rk, rns, str(o, "roleRef.name")) == nil {
			errs = append(errs, where+": roleRef names no rendered "+rk)
		}
		for _, s := range list(o, "subjects") {
			if str(s, "kind") == "ServiceAccount" && find(all, "v1", "ServiceAccount", str(s, "namespace"), str(s, "name")) == nil {
				errs = append(errs, where+": subject "+str(s, "name")+" is no rendered ServiceAccount")
			}
		}
	case "ClusterRole", "Role":
		for i, r := range list(o, "rules") {
			for _, f := range []string{"apiGroups", "resources", "verbs"} {
				if !present(get(r, f)) {
					errs = append(errs, fmt.Sprintf("%s: rules[%d].%s missing", where, i, f))
				}
			}
		}
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		errs = append(errs, checkWebhooks(all, where, o)...)
	case "CustomResourceDefinition":
		if name != str(o, "spec.names.plural")+"."+str(o, "spec.group") {
			errs = append(errs, where+": name is not <plural>.<group>")
		}
		for i, v := range list(o, "spec.versions") {
			if !present(get(v, "schema.openAPIV3Schema")) {
				errs = append(errs, fmt.Sprintf("%s: versions[%d] has no schema", where, i))
			}
		}
	}
	return errs
}

func checkDeployment(where string, o obj) []string {
	var errs []string
	if !labelsMatch(get(o, "spec.selector.matchLabels"), get(o, "spec.template.metadata.labels")) {
		errs = append(errs, where+": selector does not match the pod labels")
	}
	pod := get(o, "spec.template.spec")
	want := map[string]interface{}{"securityContext.runAsNonRoot": true,
		"securityContext.seccompProfile.type": "RuntimeDefault"}
	for p, v := range want {
		if get(pod, p) != v {
			errs = append(errs, fmt.Sprintf("%s: pod %s is not %v", where, p, v))
		}
	}
	if !present(get(pod, "serviceAccountName")) {
		errs = append(errs, where+": no serviceAccountName")
	}
	for _, c := range list(pod, "containers") {
		cn := where + " container " + str(c, "name")
		cwant := map[string]interface{}{"securityContext.readOnlyRootFilesystem": true,
			"securityContext.allowPrivilegeEscalation": false}
		for p, v := range cwant {
			if get(c, p) != v {
				errs = append(errs, fmt.Sprintf("%s: %s is not %v", cn, p, v))
			}
		}
		drop := list(c, "securityContext.capabilities.drop")
		if len(drop) != 1 || drop[0] != "ALL" {
			errs = append(errs, cn+": capabilities.drop is not [ALL]")
		}
		for _, f := range []string{"image", "livenessProbe.httpGet.path", "readinessProbe.httpGet.path", "resources.requests"} {
			if !present(get(c, f)) {
				errs = append(errs, cn+": "+f+" missing")
			}
		}
		ports := map[string]bool{}
		for _, p := range list(c, "ports") {
			ports[str(p, "name")] = true
		}
		for _, pr := range []string{"livenessProbe", "readinessProbe"} {
			if p := str(c, pr+".httpGet.port"); p != "" && !ports[p] {
				errs = append(errs, cn+": "+pr+" port "+p+" is no container port")
			}
		}
	}
	return errs
}

func checkWebhooks(all []obj, where string, o obj) []string {
	var errs []string
	seen := map[string]bool{}
	for i, w := range list(o, "webhooks") {
		wn := str(w, "name")
		at := fmt.Sprintf("%s: webhooks[%d] %s", where, i, wn)
		if strings.Count(wn, ".") < 2 || seen[wn] {
			errs = append(errs, at+": name must be a unique fully qualified name")
		}
		seen[wn] = true
		for _, f := range []string{"admissionReviewVersions", "sideEffects", "rules", "failurePolicy", "timeoutSeconds"} {
			if !present(get(w, f)) {
				errs = append(errs, at+": "+f+" missing")
			}
		}
		if fp := str(w, "failurePolicy"); fp != "Fail" && fp != "Ignore" {
			errs = append(errs, at+": failurePolicy "+fp)
		}
		svc := get(w, "clientConfig.service")
		if svc == nil {
			errs = append(errs, at+": no clientConfig.service")
			continue
		}
		s := find(all, "v1", "Service", str(svc, "namespace"), str(svc, "name"))
		if s == nil {
			errs = append(errs, at+": clientConfig.service names no rendered Service")
			continue
		}
		port := get(svc, "port")
		found := false
		for _, p := range list(s, "spec.ports") {
			if fmt.Sprint(get(p, "port")) == fmt.Sprint(port) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("%s: Service port %v does not exist", at, port))
		}
		if !strings.HasPrefix(str(svc, "path"), "/webhooks/") {
			errs = append(errs, at+": path "+str(svc, "path"))
		}
		// the webhook's own namespace is excluded: NotIn it, or In a list without it
		ownNs := false
		for _, e := range list(w, "namespaceSelector.matchExpressions") {
			if str(e, "key") != "kubernetes.io/metadata.name" {
				continue
			}
			in := false
			for _, v := range list(e, "values") {
				in = in || v == str(svc, "namespace")
			}
			switch str(e, "operator") {
			case "NotIn":
				ownNs = ownNs || in
			case "In":
				ownNs = ownNs || !in
			}
		}
		if !ownNs {
			errs = append(errs, at+": the webhook's own namespace is not excluded")
		}
		for _, r := range list(w, "rules") {
			for _, res := range list(r, "resources") {
				if strings.HasSuffix(fmt.Sprint(res), "/scale") && get(w, "objectSelector") != nil {
					errs = append(errs, at+": an objectSelector never matches a scale subresource")
				}
			}
		}
	}
	return errs
}

var helpFlag = regexp.MustCompile(`(?m)^\s*(?:-([A-Za-z0-9]), )?--([a-z0-9][a-z0-9-]*)`)

// helpFlags runs BINARY --help and returns the flag names it lists, with
// their leading dashes, and the text.
func helpFlags(bin string) (map[string]bool, string, error) {
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		return nil, string(out), fmt.Errorf("%s --help: %v\n%s", bin, err, out)
	}
	flags := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(string(out), -1) {
		flags["--"+m[2]] = true
		if m[1] != "" {
			flags["-"+m[1]] = true
		}
	}
	return flags, string(out), nil
}

// checkFlags: each binary "container=path" is asked for its --help; every
// argument of that container must be a listed flag. A flag whose value is a
// command ("--immutability-task-command=BIN SUB") names a binary given as
// BIN=path whose --help must list "BIN SUB ".
func checkFlags(all []obj, binaries []string) []string {
	var errs []string
	bins := map[string]string{}
	for _, b := range binaries {
		kv := strings.SplitN(b, "=", 2)
		if len(kv) != 2 {
			return []string{"--binary wants NAME=PATH, got " + b}
		}
		bins[kv[0]] = kv[1]
	}
	checked := 0
	for _, o := range all {
		if str(o, "kind") != "Deployment" {
			continue
		}
		for _, c := range list(o, "spec.template.spec.containers") {
			bin, ok := bins[str(c, "name")]
			if !ok {
				continue
			}
			flags, _, err := helpFlags(bin)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			for _, a := range list(c, "args") {
				arg := fmt.Sprint(a)
				name := strings.SplitN(arg, "=", 2)[0]
				if !flags[name] {
					errs = append(errs, fmt.Sprintf("%s: %s does not accept %s", str(o, "metadata.name"), bin, name))
				}
				checked++
				if name == "--immutability-task-command" && strings.Contains(arg, "=") {
					words := strings.Fields(strings.SplitN(arg, "=", 2)[1])
					if len(words) == 0 {
						errs = append(errs, "empty --immutability-task-command")
						continue
					}
					sub, ok := bins[words[0]]
					if !ok {
						errs = append(errs, fmt.Sprintf("%s names %s, which was not given with --binary", name, words[0]))
						continue
					}
					_, help, err := helpFlags(sub)
					if err != nil {
						errs = append(errs, err.Error())
						continue
					}
					if len(words) > 1 && !strings.Contains(help, words[0]+" "+words[1]+" ") {
						errs = append(errs, fmt.Sprintf("%s --help lists no subcommand %s", sub, words[1]))
					}
				}
			}
		}
	}
	if len(bins) > 0 && checked == 0 {
		errs = append(errs, "no container argument was checked against a binary")
	}
	fmt.Printf("flags: %d container arguments checked against --help of %d binaries\n", checked, len(bins))
	return errs
}

func checkManifests(path string, binaries []string) error {
	all, err := loadManifests(path)
	if err != nil {
		return err
	}
	var errs []string
	names := map[string]bool{}
	for _, o := range all {
		id := key(o) + " " + str(o, "metadata.namespace") + "/" + str(o, "metadata.name")
		if names[id] {
			errs = append(errs, "rendered twice: "+id)
		}
		names[id] = true
		errs = append(errs, checkObject(all, o)...)
	}
	errs = append(errs, checkFlags(all, binaries)...)
	if len(errs) > 0 {
		return fmt.Errorf("%d problems:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	fmt.Printf("manifests: %d objects, every one known and complete\n", len(all))
	return nil
}

// printValue prints the value at path of the object kind/name as JSON; an
// absent object is an error, an absent value prints null.
func printValue(manifests, kind, name, path string) error {
	all, err := loadManifests(manifests)
	if err != nil {
		return err
	}
	for _, o := range all {
		if str(o, "kind") == kind && str(o, "metadata.name") == name {
			v := interface{}(o)
			if path != "." {
				v = get(o, path)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			fmt.Println(string(b))
			return nil
		}
	}
	return fmt.Errorf("no %s %s in %s", kind, name, manifests)
}

// printArgs prints the args of the first container of Deployment name.
func printArgs(manifests, name string) error {
	all, err := loadManifests(manifests)
	if err != nil {
		return err
	}
	for _, o := range all {
		if str(o, "kind") == "Deployment" && str(o, "metadata.name") == name {
			for _, a := range list(o, "spec.template.spec.containers.0.args") {
				fmt.Println(a)
			}
			return nil
		}
	}
	return fmt.Errorf("no Deployment %s in %s", name, manifests)
}
