package chdb_test

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/audit/chdb"
)

// Opening a library that is not installed is an error that says how to
// install it; nothing is loaded before Open.
func ExampleOpen() {
	_, err := chdb.Open("/nonexistent/libchdb.so")
	fmt.Println(errors.Is(err, chdb.ErrLibraryNotFound))
	// Output: true
}

// The usual use: open the library, connect to a data directory, query.
func ExampleLibrary_Connect() {
	lib, err := chdb.Open(".cache/chdb/libchdb.so")
	if err != nil {
		fmt.Println("no engine here:", errors.Is(err, chdb.ErrLibraryNotFound))
		return
	}
	conn, err := lib.Connect("--path=/tmp/auditq-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	res, err := conn.Query([]byte("SELECT 40 + 2"), "TabSeparated")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Data))
}
