package prime

import "testing"

// The platform's error bodies, every documented shape: the plain detail,
// FastAPI's HTTPValidationError list (each operation's 422), the
// overview's {"errors": [{param, details}]}, and bodies that are neither.
func TestDetailOf(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"plain", `{"detail":"Sandbox not found"}`, "Sandbox not found"},
		{"list", `{"detail":[{"loc":["body","name"],"msg":"String should have at most 100 characters","type":"string_too_long"}]}`,
			"name: String should have at most 100 characters"},
		{"list, query", `{"detail":[{"loc":["query","per_page"],"msg":"Input should be less than or equal to 1000","type":"less_than_equal"}]}`,
			"per_page: Input should be less than or equal to 1000"},
		{"list, nested", `{"detail":[{"loc":["body","rules",0,"ports"],"msg":"List should have at least 1 item"},{"loc":["body"],"msg":"Value error, x"}]}`,
			"rules.0.ports: List should have at least 1 item; Value error, x"},
		{"list, no root", `{"detail":[{"loc":["name"],"msg":"field required"}]}`, "name: field required"},
		{"errors form", `{"errors":[{"param":"name","details":"Field required"},{"param":"cpu_cores","details":"Input should be a valid integer"}]}`,
			"name: Field required; cpu_cores: Input should be a valid integer"},
		{"errors form, no param", `{"errors":[{"param":"","details":"Invalid request data"}]}`, "Invalid request data"},
		{"detail object", `{"detail":{"code":"x"}}`, `{"code":"x"}`},
		{"not JSON", `oops`, "oops"},
		{"empty object", `{}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := detailOf([]byte(tc.body)); got != tc.want {
				t.Errorf("detailOf(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}
