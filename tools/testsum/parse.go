package main

import "encoding/json"

func parseEvent(line string) (event, bool) {
	var e event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
		return e, false
	}
	return e, true
}
