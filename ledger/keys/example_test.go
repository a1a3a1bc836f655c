package keys_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/writ-ledger/writ/ledger/keys"
)

// A command line resolves what its flags ask about the runner key before
// it opens the decision log, and maps each refusal to its flags.
func ExampleResolve() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)

	// A new runner, nothing asked: its key is kept as file.
	r, err := keys.Resolve(dir, keys.Choice{})
	fmt.Println(r.Protection, r.Exists, err)

	// A passphrase for a key kept as file is refused.
	_, err = keys.Resolve(dir, keys.Choice{Secret: "passphrase-file"})
	fmt.Println(errors.Is(err, keys.ErrSecretUnused))

	// A token key is kept as pkcs11.
	r, err = keys.Resolve(dir, keys.Choice{TokenKey: "pkcs11:token=T;object=O"})
	fmt.Println(r.Protection, err)
	// Output:
	// file false <nil>
	// true
	// pkcs11 <nil>
}
