package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Sort orders search results (always descending).
type Sort string

const (
	SortDownloads Sort = "downloads"
	SortLikes     Sort = "likes"
	SortUpdated   Sort = "lastModified"
	SortTrending  Sort = "trendingScore"
)

// SearchQuery is a model search.
type SearchQuery struct {
	Text    string // free text matched against repo ids
	Library string // "gguf" (default), "safetensors", or "" with All
	All     bool   // no library filter
	Author  string // optional owner filter
	Sort    Sort   // default SortDownloads
	Limit   int    // results per page, default 30 (the hub caps it at 1000)
}

// ModelSummary is one search result (the fields of /api/models).
type ModelSummary struct {
	ID           string          `json:"id"`
	Author       string          `json:"author,omitempty"`
	Downloads    int64           `json:"downloads"`
	Likes        int64           `json:"likes"`
	Tags         []string        `json:"tags,omitempty"`
	PipelineTag  string          `json:"pipeline_tag,omitempty"`
	LibraryName  string          `json:"library_name,omitempty"`
	CreatedAt    time.Time       `json:"createdAt"`
	LastModified time.Time       `json:"lastModified"`
	Private      bool            `json:"private,omitempty"`
	GatedRaw     json.RawMessage `json:"gated,omitempty"` // false, "auto" or "manual"
}

// Gated reports whether the model needs its licence accepted.
func (m *ModelSummary) Gated() bool {
	var b bool
	if json.Unmarshal(m.GatedRaw, &b) == nil {
		return b
	}
	var s string
	return json.Unmarshal(m.GatedRaw, &s) == nil && s != "" && s != "false"
}

// SearchPage is one page of results; Next is "" on the last page.
type SearchPage struct {
	Models []ModelSummary
	Next   string
}

// SearchURL is the first page's URL for q.
func (c *Client) SearchURL(q SearchQuery) string {
	v := url.Values{}
	if q.Text != "" {
		v.Set("search", q.Text)
	}
	if lib := q.library(); lib != "" {
		v.Set("filter", lib)
	}
	if q.Author != "" {
		v.Set("author", q.Author)
	}
	sort := q.Sort
	if sort == "" {
		sort = SortDownloads
	}
	v.Set("sort", string(sort))
	v.Set("direction", "-1")
	limit := q.Limit
	if limit <= 0 {
		limit = 30
	}
	v.Set("limit", strconv.Itoa(min(limit, 1000)))
	// expand[] asks for fields the hub leaves out by default.
	for _, f := range []string{"downloads", "likes", "tags", "pipeline_tag", "library_name", "createdAt", "lastModified", "gated", "private", "author"} {
		v.Add("expand[]", f)
	}
	return c.endpoint() + "/api/models?" + v.Encode()
}

func (q SearchQuery) library() string {
	switch {
	case q.All:
		return ""
	case q.Library == "":
		return "gguf"
	}
	return q.Library
}

// Search fetches the first page of results.
func (c *Client) Search(ctx context.Context, q SearchQuery) (*SearchPage, error) {
	return c.SearchPage(ctx, c.SearchURL(q))
}

// SearchPage fetches the page at pageURL (SearchURL or a page's Next).
func (c *Client) SearchPage(ctx context.Context, pageURL string) (*SearchPage, error) {
	p := &SearchPage{}
	next, err := c.getJSON(ctx, pageURL, what{repo: "search"}, &p.Models)
	if err != nil {
		return nil, fmt.Errorf("hub: search: %w", err)
	}
	p.Next = next
	for i := range p.Models {
		m := &p.Models[i]
		if m.Author == "" {
			m.Author = ownerOf(m.ID)
		}
	}
	return p, nil
}

func ownerOf(id string) string {
	for i := range len(id) {
		if id[i] == '/' {
			return id[:i]
		}
	}
	return ""
}
