package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// ToolName is the name the model calls the memory tool by.
const ToolName = "memory"

// Beta is the beta the memory tool belongs to; pass it in the request's
// Betas.
const Beta = sdk.AnthropicBetaContextManagement2025_06_27

// ErrInvalidInput reports a memory tool_use block whose input is not a
// command object. Handle returns it to the model as an error result.
var ErrInvalidInput = errors.New("anthropic: memory tool input is not a command")

// ToolParam returns the memory tool to add to a request's Tools.
func ToolParam() sdk.BetaToolUnionParam {
	return sdk.BetaToolUnionParam{OfMemoryTool20250818: &sdk.BetaMemoryTool20250818Param{}}
}

// DecodeToolUse returns the command of a memory tool_use block. It fails
// with ErrNotMemoryTool for another tool's block and ErrInvalidInput when
// the input is not a JSON object of the command's fields.
func DecodeToolUse(b sdk.BetaToolUseBlock) (Command, error) {
	if b.Name != ToolName {
		return Command{}, fmt.Errorf("%w: %q", ErrNotMemoryTool, b.Name)
	}
	raw := json.RawMessage(b.JSON.Input.Raw())
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(b.Input); err != nil {
			return Command{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
		}
	}
	var c Command
	if err := json.Unmarshal(raw, &c); err != nil {
		return Command{}, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	return c, nil
}

// CommandOf converts the SDK's command union to a Command.
func CommandOf(u sdk.BetaMemoryTool20250818CommandUnion) Command {
	return Command{
		Command: u.Command, Path: u.Path, ViewRange: u.ViewRange, FileText: u.FileText,
		OldStr: u.OldStr, NewStr: u.NewStr, InsertLine: u.InsertLine, InsertText: u.InsertText,
		OldPath: u.OldPath, NewPath: u.NewPath,
	}
}

// ResultBlock returns the tool_result block that answers toolUseID with r.
func ResultBlock(toolUseID string, r Result) sdk.BetaContentBlockParamUnion {
	return sdk.NewBetaToolResultBlock(toolUseID, r.Text, r.IsError)
}

// Handle executes one memory tool_use block for namespace and returns the
// tool_result block to send back. Input the model got wrong comes back as
// an error result; Go errors are those of Execute and ErrNotMemoryTool.
func (t *Tool) Handle(ctx context.Context, namespace string, b sdk.BetaToolUseBlock) (sdk.BetaContentBlockParamUnion, error) {
	cmd, err := DecodeToolUse(b)
	if errors.Is(err, ErrInvalidInput) {
		return ResultBlock(b.ID, refused(fmt.Sprintf("Invalid memory command input: %v", err))), nil
	} else if err != nil {
		return sdk.BetaContentBlockParamUnion{}, err
	}
	r, err := t.Execute(ctx, namespace, b.ID, cmd)
	if err != nil {
		return sdk.BetaContentBlockParamUnion{}, err
	}
	return ResultBlock(b.ID, r), nil
}

// HandleMessage executes every memory tool_use block of an assistant
// message, in order, and returns their tool_result blocks (blocks of
// other tools are left to the application). A replayed message returns
// the same results without applying anything twice. A nil message has
// no blocks to answer.
func (t *Tool) HandleMessage(ctx context.Context, namespace string, m *sdk.BetaMessage) ([]sdk.BetaContentBlockParamUnion, error) {
	var out []sdk.BetaContentBlockParamUnion
	if m == nil {
		return out, nil
	}
	for _, c := range m.Content {
		if c.Type != "tool_use" || c.Name != ToolName {
			continue
		}
		r, err := t.Handle(ctx, namespace, c.AsToolUse())
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Listing returns the view of /memories for namespace: the text a view
// command of the root returns.
func (t *Tool) Listing(ctx context.Context, namespace string) (string, error) {
	r, err := t.Execute(ctx, namespace, "", Command{Command: "view", Path: Root})
	return r.Text, err
}

// ListingBlock returns namespace's listing as a text block, to put beside
// the user's prompt (or in the system prompt) so the model sees its
// memory directory without a view call. '&', '<' and '>' in names are
// written as "&amp;", "&lt;" and "&gt;", so no name can close the tag.
func (t *Tool) ListingBlock(ctx context.Context, namespace string) (sdk.BetaTextBlockParam, error) {
	s, err := t.Listing(ctx, namespace)
	if err != nil {
		return sdk.BetaTextBlockParam{}, err
	}
	return sdk.BetaTextBlockParam{Text: "<memory_directory>\n" + tagEscaper.Replace(s) + "\n</memory_directory>"}, nil
}

// tagEscaper escapes the characters that could end or open a tag.
var tagEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
