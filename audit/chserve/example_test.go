package chserve_test

import (
	"fmt"

	"github.com/toolgate/toolgate/audit/chserve"
)

// AUDITQ_SERVE_USERS lists the server's accounts.
func ExampleParseUsers() {
	users, err := chserve.ParseUsers("writer:s3cret:rw,reader:0ther:ro")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range users {
		fmt.Println(u.Name, u.Role)
	}
	// Output:
	// writer rw
	// reader ro
}

// Analyze tells the server what a statement is before the engine sees it:
// its kind (for access control), its FORMAT and where INSERT data starts.
func ExampleAnalyze() {
	sql := "INSERT INTO calls FORMAT JSONEachRow\n{\"id\":1}\n"
	st := chserve.Analyze(sql)
	fmt.Println(st.Kind, st.Format)
	fmt.Printf("%q\n", sql[st.Data:])

	st = chserve.Analyze("SELECT * FROM calls FORMAT CSV; DROP TABLE calls")
	fmt.Println(st.Kind, st.Format, st.Multi)
	// Output:
	// insert JSONEachRow
	// "{\"id\":1}\n"
	// read CSV true
}
