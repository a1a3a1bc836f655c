package delegation

import "github.com/writ-ledger/writ/schemas"

// MaxRevocationTarget bounds, in bytes, a file a revocation's target is
// taken from (RevocationTarget's data): a signed record, at most
// schemas.MaxRecordSize (65,535) bytes once wrapped, or a PEM public key,
// at most sign.MaxPublicKeyFile (16 KiB). A larger file is neither, and
// a caller refuses it before reading it whole.
const MaxRevocationTarget = schemas.MaxRecordSize
