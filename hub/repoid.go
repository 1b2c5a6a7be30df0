package hub

import "strings"

// MaxRepoIDLen is huggingface_hub's limit on a repo id (validate_repo_id,
// docs/hub-api.md §3).
const MaxRepoIDLen = 96

// ValidRepoID reports whether id is a Hub model repo id that is safe to put
// into a URL path as it is: "name" or "namespace/name", each part of ASCII
// letters, digits, '_', '-' and '.', beginning and ending with a letter,
// digit or '_', with no "--" or ".." and no ".git" suffix — huggingface_hub's
// validate_repo_id, restricted to ASCII. Nothing else reaches a request, so
// no id can climb out of its path ("../", "%2e", "?", "#", "\").
func ValidRepoID(id string) bool {
	if id == "" || len(id) > MaxRepoIDLen || strings.Contains(id, "--") || strings.Contains(id, "..") || strings.HasSuffix(id, ".git") {
		return false
	}
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if !validName(p) {
			return false
		}
	}
	return true
}

// validName is one part of a repo id (see ValidRepoID).
func validName(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		word := c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !word && (c != '-' && c != '.' || i == 0 || i == len(p)-1) {
			return false
		}
	}
	return true
}

// ValidName reports whether s can be a repo name (the part after the
// namespace), for a search by name.
func ValidName(s string) bool {
	return len(s) <= MaxRepoIDLen && validName(s) && !strings.Contains(s, "--") && !strings.Contains(s, "..")
}
