// Rendering a Helm chart the way `helm template` does, without helm: Go's
// text/template (the engine Helm itself uses) with the sprig function library
// (the one Helm registers) and Helm's own additions (include, tpl, required,
// toYaml, fromYaml, toJson, fromJson, lookup), the built-in objects .Values,
// .Release, .Chart, .Capabilities, .Template and .Files, Helm's value
// coalescing (chart defaults < -f files < --set, null deletes a key), the
// check of the values against values.schema.json (schema.go) and its
// output conventions (templates starting with "_" are partials, empty output
// is dropped, "<no value>" becomes "", one "# Source:" header per document,
// documents sorted by kind in Helm's install order).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

// chartMeta is the part of Chart.yaml templates read as .Chart (Helm's
// chart.Metadata field names).
type chartMeta struct {
	APIVersion  string `json:"apiVersion"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion"`
	Description string `json:"description"`
	Type        string `json:"type"`
	KubeVersion string `json:"kubeVersion"`
	Home        string `json:"home"`
}

type release struct {
	Name      string
	Namespace string
	Service   string
	IsInstall bool
	IsUpgrade bool
	Revision  int
}

type kubeVersion struct {
	Version    string
	Major      string
	Minor      string
	GitVersion string
}

type apiVersions []string

// Has is .Capabilities.APIVersions.Has "group/version" or "group/version/Kind".
func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

type capabilities struct {
	KubeVersion kubeVersion
	APIVersions apiVersions
}

// files is .Files: every chart file outside templates/, by its path in the chart.
type files map[string][]byte

func (f files) Get(name string) string      { return string(f[name]) }
func (f files) GetBytes(name string) []byte { return f[name] }

// Glob returns the files whose path matches pattern, as a files object.
func (f files) Glob(pattern string) files {
	out := files{}
	for k, v := range f {
		if ok, _ := filepath.Match(pattern, k); ok {
			out[k] = v
		}
	}
	return out
}

type renderOpts struct {
	chartDir    string
	name        string
	namespace   string
	valueFiles  []string
	sets        []string
	apiVersions []string
}

// coalesce merges src over dst as Helm does for values: maps merge
// recursively, anything else in src replaces dst, a null in src deletes.
func coalesce(dst, src map[string]interface{}) map[string]interface{} {
	for k, sv := range src {
		if sv == nil {
			delete(dst, k)
			continue
		}
		sm, sIsMap := sv.(map[string]interface{})
		dm, dIsMap := dst[k].(map[string]interface{})
		if sIsMap && dIsMap {
			dst[k] = coalesce(dm, sm)
		} else {
			dst[k] = sv
		}
	}
	return dst
}

// setValue applies one --set a.b.c=value (value: true, false, null, an
// integer, else a string; Helm's strvals typing for plain scalars).
func setValue(vals map[string]interface{}, expr string) error {
	eq := strings.IndexByte(expr, '=')
	if eq <= 0 {
		return fmt.Errorf("--set %q: want key=value", expr)
	}
	keys := strings.Split(expr[:eq], ".")
	raw := expr[eq+1:]
	var v interface{} = raw
	switch {
	case raw == "true":
		v = true
	case raw == "false":
		v = false
	case raw == "null":
		v = nil
	default:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			v = n
		}
	}
	m := vals
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	if v == nil {
		delete(m, keys[len(keys)-1])
	} else {
		m[keys[len(keys)-1]] = v
	}
	return nil
}

func readYAMLMap(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

// funcMap is sprig's text function map without env/expandenv (as Helm) plus
// Helm's functions; include and tpl close over the template set.
func funcMap(set **template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	includeDepth := 0
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return v, fmt.Errorf("%s", msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return v, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	f["lookup"] = func(apiVersion, kind, ns, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	f["include"] = func(name string, data interface{}) (string, error) {
		if includeDepth > 1000 {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		includeDepth++
		defer func() { includeDepth-- }()
		var buf bytes.Buffer
		if err := (*set).ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := (*set).Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	return f
}

// render returns the manifests of the chart, one "# Source:" section per
// non-empty template, in the order of the template file names.
func render(o renderOpts) (string, error) {
	var meta chartMeta
	data, err := os.ReadFile(filepath.Join(o.chartDir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("Chart.yaml: %v", err)
	}
	if meta.Name == "" || meta.Version == "" || meta.APIVersion != "v2" {
		return "", fmt.Errorf("Chart.yaml: apiVersion v2, name and version are required")
	}
	vals, err := readYAMLMap(filepath.Join(o.chartDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	for _, vf := range o.valueFiles {
		over, err := readYAMLMap(vf)
		if err != nil {
			return "", err
		}
		vals = coalesce(vals, over)
	}
	for _, s := range o.sets {
		if err := setValue(vals, s); err != nil {
			return "", err
		}
	}

	schema, err := loadSchema(filepath.Join(o.chartDir, "values.schema.json"))
	if err != nil {
		return "", err
	}
	if errs := validateValues(schema, vals); schema != nil && len(errs) > 0 {
		return "", fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s",
			meta.Name, strings.Join(errs, "\n"))
	}

	chartFiles := files{}
	var tplNames []string
	err = filepath.Walk(o.chartDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(o.chartDir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "templates/") {
			tplNames = append(tplNames, rel)
			return nil
		}
		b, err := os.ReadFile(p)
		chartFiles[rel] = b
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(tplNames)

	var set *template.Template
	set = template.New("chart").Option("missingkey=zero").Funcs(funcMap(&set))
	for _, n := range tplNames {
		b, err := os.ReadFile(filepath.Join(o.chartDir, n))
		if err != nil {
			return "", err
		}
		if _, err := set.New(meta.Name + "/" + n).Parse(string(b)); err != nil {
			return "", err
		}
	}

	top := map[string]interface{}{
		"Values": vals,
		"Release": release{Name: o.name, Namespace: o.namespace, Service: "Helm",
			IsInstall: true, Revision: 1},
		"Chart": meta,
		"Capabilities": capabilities{
			KubeVersion: kubeVersion{Version: "v1.30.0", Major: "1", Minor: "30",
				GitVersion: "v1.30.0"},
			APIVersions: append(apiVersions{"v1", "apps/v1", "policy/v1",
				"rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1",
				"apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "batch/v1"},
				o.apiVersions...),
		},
		"Files": chartFiles,
	}
	var docs []manifest
	for _, n := range tplNames {
		if strings.HasPrefix(filepath.Base(n), "_") {
			continue
		}
		full := meta.Name + "/" + n
		top["Template"] = map[string]interface{}{"Name": full,
			"BasePath": meta.Name + "/templates"}
		var buf bytes.Buffer
		if err := set.ExecuteTemplate(&buf, full, top); err != nil {
			return "", err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		for _, d := range reDocSep.Split(text, -1) {
			if strings.TrimSpace(d) == "" {
				continue
			}
			kind := ""
			if m := reKind.FindStringSubmatch(d); m != nil {
				kind = m[1]
			}
			docs = append(docs, manifest{source: full, kind: kind, text: strings.Trim(d, "\n")})
		}
	}
	sort.SliceStable(docs, func(i, j int) bool { return lessByKind(docs[i].kind, docs[j].kind) })
	var out strings.Builder
	for _, d := range docs {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", d.source, d.text)
	}
	return out.String(), nil
}

type manifest struct{ source, kind, text string }

var (
	reDocSep = regexp.MustCompile(`(?m)^---[ \t]*$`)
	reKind   = regexp.MustCompile(`(?m)^kind:\s*(\S+)`)
)

// installOrder is Helm's releaseutil.InstallOrder: helm template prints the
// manifests sorted by kind in this order, other kinds after them by name.
var installOrder = []string{"PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota",
	"LimitRange", "PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount", "Secret",
	"SecretList", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
	"CustomResourceDefinition", "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
	"ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList", "Service",
	"DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
	"HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress",
	"APIService", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

func lessByKind(a, b string) bool {
	ia, ib := len(installOrder), len(installOrder)
	for i, k := range installOrder {
		if k == a {
			ia = i
		}
		if k == b {
			ib = i
		}
	}
	if ia != ib {
		return ia < ib
	}
	if ia == len(installOrder) {
		return a < b
	}
	return false
}
