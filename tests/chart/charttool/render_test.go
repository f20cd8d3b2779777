package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chart writes a chart with the given templates and values into a temp dir.
func chart(t *testing.T, values string, tpls map[string]string) string {
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 1.2.3\nappVersion: \"4.5\"\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "values.yaml"), []byte(values), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "files"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "files", "a.txt"), []byte("from a file"), 0o644))
	for n, text := range tpls {
		must(os.WriteFile(filepath.Join(dir, "templates", n), []byte(text), 0o644))
	}
	return dir
}

func renderOK(t *testing.T, o renderOpts) string {
	out, err := render(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHelmSemantics(t *testing.T) {
	dir := chart(t, "a: {b: 1, c: [x, z]}\nn: null\nflag: false\nname: base\n", map[string]string{
		"_h.tpl": `{{ define "h.x" }}x-{{ .Values.name }}{{ end }}`,
		"cm.yaml": `kind: ConfigMap
metadata: {name: {{ include "h.x" . }}, ns: {{ .Release.Namespace }}}
data:
  missing: "{{ .Values.nothing }}"
  chart: {{ .Chart.Name }}-{{ .Chart.Version }}-{{ .Chart.AppVersion }}
  service: {{ .Release.Service }}
  tpl: {{ tpl "{{ .Values.name }}!" . }}
  file: {{ .Files.Get "files/a.txt" | quote }}
  yaml: {{- toYaml .Values.a | nindent 4 }}
  b64: {{ "hi" | b64enc }}
  flag: {{ .Values.flag | default true }}
  tmpl: {{ .Template.Name }}
---
kind: ServiceAccount
metadata: {name: first}`,
		"empty.yaml": `{{- if .Values.flag }}kind: Secret{{ end }}`,
	})
	out := renderOK(t, renderOpts{chartDir: dir, name: "r", namespace: "ns"})
	for _, want := range []string{
		"name: x-base, ns: ns", `missing: ""`, "chart: c-1.2.3-4.5", "service: Helm",
		"tpl: base!", `file: "from a file"`, "yaml:\n    b: 1\n    c:\n    - x\n    - z",
		"b64: aGk=", "flag: true", "tmpl: c/templates/cm.yaml",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "empty.yaml") {
		t.Error("an empty template was rendered")
	}
	if strings.Index(out, "kind: ServiceAccount") > strings.Index(out, "kind: ConfigMap") {
		t.Error("not in Helm's install order (ServiceAccount before ConfigMap)")
	}
	if strings.Count(out, "# Source: c/templates/cm.yaml") != 2 {
		t.Error("want one Source header per document")
	}
}

func TestValueCoalescing(t *testing.T) {
	// YAML 1.1 as Helm reads values (go-yaml v2 through sigs.k8s.io/yaml): a bare y is true
	dir := chart(t, "q: [y, \"y\", 010]\n", map[string]string{"t.yaml": `v: {{ toJson .Values.q }}`})
	if out := renderOK(t, renderOpts{chartDir: dir}); !strings.Contains(out, `v: [true,"y",8]`) {
		t.Errorf("YAML 1.1 values: %s", out)
	}
	dir = chart(t, "a: {b: 1, c: 2}\nl: [1, 2]\n", map[string]string{
		"t.yaml": `v: {{ toJson .Values }}`,
	})
	f := filepath.Join(t.TempDir(), "over.yaml")
	if err := os.WriteFile(f, []byte("a: {c: null, d: 3}\nl: [9]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := renderOK(t, renderOpts{chartDir: dir, valueFiles: []string{f}, sets: []string{"a.e=x", "a.f=7", "g=true"}})
	want := `v: {"a":{"b":1,"d":3,"e":"x","f":7},"g":true,"l":[9]}`
	if !strings.Contains(out, want) {
		t.Errorf("want %s in %s", want, out)
	}
}

func TestRequiredAndFail(t *testing.T) {
	dir := chart(t, "x: \"\"\n", map[string]string{
		"t.yaml": `v: {{ required "x is required" .Values.x }}`,
	})
	if _, err := render(renderOpts{chartDir: dir}); err == nil || !strings.Contains(err.Error(), "x is required") {
		t.Errorf("required: %v", err)
	}
	dir = chart(t, "", map[string]string{"t.yaml": `{{ fail "stop here" }}`})
	if _, err := render(renderOpts{chartDir: dir}); err == nil || !strings.Contains(err.Error(), "stop here") {
		t.Errorf("fail: %v", err)
	}
	dir = chart(t, "", map[string]string{"t.yaml": `{{ env "HOME" }}`})
	if _, err := render(renderOpts{chartDir: dir}); err == nil {
		t.Error("env is not a Helm function")
	}
}

func TestValuesSchema(t *testing.T) {
	dir := chart(t, "w: {policy: Fail, num: 3, d: 10m, args: [a]}\nopt: null\n", map[string]string{"t.yaml": `v: {{ .Values.w.policy }}`})
	schema := `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
	  "additionalProperties": false,
	  "properties": {
	    "opt": {"type": ["integer", "null"], "minimum": 1},
	    "w": {"type": "object", "additionalProperties": false, "required": ["policy"],
	      "properties": {
	        "policy": {"type": "string", "enum": ["Fail", "Ignore"]},
	        "num": {"type": "integer", "minimum": 1, "maximum": 30},
	        "d": {"type": "string", "pattern": "^([0-9]+(ms|s|m|h))+$"},
	        "args": {"type": "array", "items": {"type": "string", "minLength": 1}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "values.schema.json"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := renderOK(t, renderOpts{chartDir: dir}); !strings.Contains(out, "v: Fail") {
		t.Errorf("defaults: %s", out)
	}
	renderOK(t, renderOpts{chartDir: dir, sets: []string{"opt=2", "w.num=30"}})
	for set, want := range map[string]string{
		"w.polcy=Fail":  "- w: Additional property polcy is not allowed",
		"x=1":           "- (root): Additional property x is not allowed",
		"w.policy=Stop": `- w.policy: w.policy must be one of the following: "Fail", "Ignore"`,
		"w.num=31":      "- w.num: Must be less than or equal to 30",
		"w.num=0":       "- w.num: Must be greater than or equal to 1",
		"w.num=three":   "- w.num: Invalid type. Expected: integer, given: string",
		"opt=0":         "- opt: Must be greater than or equal to 1",
		"w.d=1 day":     "- w.d: Does not match pattern",
		"w.args=a":      "- w.args: Invalid type. Expected: array, given: string",
		"w.policy=null": "- w: policy is required",
	} {
		_, err := render(renderOpts{chartDir: dir, sets: []string{set}})
		if err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "values don't meet the specifications of the schema(s) in the following chart(s):\nc:\n") {
			t.Errorf("--set %s: want %q, got %v", set, want, err)
		}
	}
	f := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(f, []byte("w: {args: [\"\"], num: 2.5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := render(renderOpts{chartDir: dir, valueFiles: []string{f}})
	if err == nil || !strings.Contains(err.Error(), "- w.args.0: String length must be greater than or equal to 1") ||
		!strings.Contains(err.Error(), "- w.num: Invalid type. Expected: integer, given: number") {
		t.Errorf("-f: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "values.schema.json"), []byte(`{"oneOf": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := render(renderOpts{chartDir: dir}); err == nil || !strings.Contains(err.Error(), `keyword "oneOf" is not supported`) {
		t.Errorf("an unsupported keyword: %v", err)
	}
}
