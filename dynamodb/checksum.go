package dynamodb

import (
	"context"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strconv"

	awsdynamodb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// sdkChecksumID is the id of the SDK's response CRC32 check in the
// Deserialize step (service/dynamodb/internal/customizations).
const sdkChecksumID = "DynamoDB:ResponseChecksumValidation"

// checkPresentCRC32 is the client option store.Open's client gets: the
// SDK's check of the X-Amz-Crc32 response header is replaced, at the same
// place in the stack, by one that checks the CRC32 of every response that
// carries the header and leaves a response without one alone.
//
// The SDK's check compares the body with 0 when the header is absent, and
// its failure only ever reaches the log ("failed to close HTTP response
// body, this may affect connection reuse: response did not match expected
// checksum, 0, N"): the body has been read to its end by then and the
// connection is reused. DynamoDB Local answers every error (HTTP 400: a
// failed condition, a cancelled transaction, a missing table) without the
// header, so each of them logged that warning; its successes carry a
// correct CRC32 (TestResponseChecksums). A response whose header is present
// and wrong is reported exactly as the SDK reports it.
func checkPresentCRC32(o *awsdynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		if _, ok := s.Deserialize.Get(sdkChecksumID); !ok {
			return nil // the caller turned the check off (DisableValidateResponseChecksum)
		}
		_, err := s.Deserialize.Swap(sdkChecksumID, presentCRC32{})
		return err
	})
}

// presentCRC32 checks a response body against its X-Amz-Crc32 header when
// the header is present.
type presentCRC32 struct{}

func (presentCRC32) ID() string { return sdkChecksumID }

func (presentCRC32) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.Body == nil {
		return out, md, err
	}
	v := resp.Header.Get("X-Amz-Crc32")
	if v == "" {
		return out, md, err
	}
	want, perr := strconv.ParseUint(v, 10, 32)
	if perr != nil {
		return out, md, fmt.Errorf("dynamodb: the response's X-Amz-Crc32 header %q is not a CRC32: %w", v, perr)
	}
	h := crc32.NewIEEE()
	resp.Body = &crc32Body{Reader: io.TeeReader(resp.Body, h), body: resp.Body, hash: h, want: uint32(want)}
	return out, md, err
}

// crc32Body computes the CRC32 of what is read through it and compares it
// with want on Close.
type crc32Body struct {
	io.Reader
	body io.Closer
	hash hash.Hash32
	want uint32
}

func (b *crc32Body) Close() error {
	err := b.body.Close()
	if got := b.hash.Sum32(); got != b.want {
		return fmt.Errorf("response did not match expected checksum, %d, %d", b.want, got)
	}
	return err
}
