// Values checked against the chart's values.schema.json, as `helm template`
// and `helm install` do when a chart ships one: the final values (defaults,
// -f files, --set) must validate, else nothing renders and every violation is
// listed, in the words of gojsonschema (the validator Helm uses).
//
// This is the subset of JSON Schema draft-07 the chart's schema uses: type
// (one or a list), enum, properties, additionalProperties (false or a schema),
// required, items (one schema), minimum, maximum, minLength, maxLength and
// pattern; $schema, title and description are annotations. A schema with any
// other keyword is refused, so a check is never silently skipped.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
)

var schemaKeywords = map[string]bool{"$schema": true, "title": true, "description": true,
	"type": true, "enum": true, "properties": true, "additionalProperties": true,
	"required": true, "items": true, "minimum": true, "maximum": true, "minLength": true,
	"maxLength": true, "pattern": true}

// loadSchema reads a values.schema.json; (nil, nil) when there is none.
func loadSchema(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s map[string]interface{}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := checkSchema(s, "#"); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// checkSchema refuses keywords this validator does not implement and patterns
// that do not compile.
func checkSchema(s map[string]interface{}, at string) error {
	for k, v := range s {
		if !schemaKeywords[k] {
			return fmt.Errorf("%s: keyword %q is not supported by charttool", at, k)
		}
		switch k {
		case "properties":
			props, ok := v.(map[string]interface{})
			if !ok {
				return fmt.Errorf("%s/properties: not an object", at)
			}
			for name, p := range props {
				ps, ok := p.(map[string]interface{})
				if !ok {
					return fmt.Errorf("%s/properties/%s: not a schema", at, name)
				}
				if err := checkSchema(ps, at+"/properties/"+name); err != nil {
					return err
				}
			}
		case "items", "additionalProperties":
			if ps, ok := v.(map[string]interface{}); ok {
				if err := checkSchema(ps, at+"/"+k); err != nil {
					return err
				}
			} else if _, ok := v.(bool); !ok || k == "items" {
				return fmt.Errorf("%s/%s: not a schema", at, k)
			}
		case "pattern":
			p, _ := v.(string)
			if _, err := regexp.Compile(p); err != nil {
				return fmt.Errorf("%s/pattern: %v", at, err)
			}
		}
	}
	return nil
}

// validateValues returns every violation of schema by values, one a line as
// "- FIELD: MESSAGE"; empty when they validate.
func validateValues(schema map[string]interface{}, values map[string]interface{}) []string {
	var errs []string
	validate(schema, values, "(root)", &errs)
	return errs
}

func typeOf(v interface{}) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]interface{}:
		return "object"
	case []interface{}:
		return "array"
	case int, int64:
		return "integer"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func number(v interface{}) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func child(field, key string) string {
	if field == "(root)" {
		return key
	}
	return field + "." + key
}

func validate(s map[string]interface{}, v interface{}, field string, errs *[]string) {
	add := func(format string, a ...interface{}) {
		*errs = append(*errs, "- "+field+": "+fmt.Sprintf(format, a...))
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch x := t.(type) {
		case string:
			types = []string{x}
		case []interface{}:
			for _, e := range x {
				types = append(types, fmt.Sprint(e))
			}
		}
		got, match := typeOf(v), false
		for _, w := range types {
			match = match || typeMatches(w, got)
		}
		if !match {
			add("Invalid type. Expected: %s, given: %s", strings.Join(types, "/"), got)
			return
		}
	}
	if enum, ok := s["enum"].([]interface{}); ok {
		found := false
		var allowed []string
		for _, e := range enum {
			found = found || fmt.Sprint(e) == fmt.Sprint(v) && typeOf(e) == typeOf(v)
			allowed = append(allowed, toJSON(e))
		}
		if !found {
			add("%s must be one of the following: %s", field, strings.Join(allowed, ", "))
		}
	}
	switch x := v.(type) {
	case map[string]interface{}:
		validateObject(s, x, field, errs)
	case []interface{}:
		if items, ok := s["items"].(map[string]interface{}); ok {
			for i, e := range x {
				validate(items, e, child(field, fmt.Sprint(i)), errs)
			}
		}
	case string:
		n := float64(len([]rune(x)))
		if m, ok := s["minLength"].(float64); ok && n < m {
			add("String length must be greater than or equal to %v", m)
		}
		if m, ok := s["maxLength"].(float64); ok && n > m {
			add("String length must be less than or equal to %v", m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			add("Does not match pattern '%s'", p)
		}
	}
	if n, ok := number(v); ok {
		if m, ok := s["minimum"].(float64); ok && n < m {
			add("Must be greater than or equal to %v", m)
		}
		if m, ok := s["maximum"].(float64); ok && n > m {
			add("Must be less than or equal to %v", m)
		}
	}
}

func validateObject(s map[string]interface{}, v map[string]interface{}, field string, errs *[]string) {
	props, _ := s["properties"].(map[string]interface{})
	if req, ok := s["required"].([]interface{}); ok {
		for _, r := range req {
			if _, ok := v[fmt.Sprint(r)]; !ok {
				*errs = append(*errs, fmt.Sprintf("- %s: %v is required", field, r))
			}
		}
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := props[k].(map[string]interface{}); ok {
			validate(ps, v[k], child(field, k), errs)
			continue
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if !ap {
				*errs = append(*errs, fmt.Sprintf("- %s: Additional property %s is not allowed", field, k))
			}
		case map[string]interface{}:
			validate(ap, v[k], child(field, k), errs)
		}
	}
}
