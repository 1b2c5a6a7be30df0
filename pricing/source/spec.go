package source

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/pricing"

	"github.com/vrambot/vrambot/suggest"
)

// specHelp lists the accepted VRAMBOT_PRICE_SOURCES tokens.
const specHelp = "embedded, gpuhunt[:PROVIDER], skypilot[:CLOUD|:URL], azure[:URL], custom:URL"

// specKinds are the source kinds a token may start with.
var specKinds = []string{"embedded", "gpuhunt", "skypilot", "azure", "custom"}

// skypilotCloudName matches a cloud directory of the SkyPilot catalog.
var skypilotCloudName = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// FromSpec builds the sources named by a VRAMBOT_PRICE_SOURCES value, a comma
// list of tokens:
//
//	embedded              the snapshot compiled into the binary
//	gpuhunt               every catalog gpuhunt publishes, one source each
//	gpuhunt:PROVIDER      one gpuhunt catalog (aws, lambdalabs, ...; see GPUHuntProviders)
//	skypilot              the Shadeform, Vast and Lambda SkyPilot catalogs
//	skypilot:CLOUD        SkyPilot's v8 catalog of one cloud (lambda, vast, ...)
//	skypilot:URL          a vms.csv at URL
//	azure                 the Azure Retail Prices API (azure:URL for another endpoint)
//	custom:URL            an internal CSV or JSON price list
//
// An empty spec means just the embedded snapshot. A token named twice gives
// one source. An unknown token is an error that names it and suggests the
// nearest kind. client is shared by the network sources; nil gets a default
// with a timeout.
func FromSpec(spec string, client *http.Client) ([]pricing.Source, error) {
	var sources []pricing.Source
	seen := make(map[string]bool)
	add := func(s pricing.Source) {
		if !seen[s.Name()] {
			seen[s.Name()] = true
			sources = append(sources, s)
		}
	}
	for _, token := range strings.Split(spec, ",") {
		token = strings.TrimSpace(token)
		if token == "" {
			continue
		}
		built, err := fromToken(token, client)
		if err != nil {
			return nil, err
		}
		for _, s := range built {
			add(s)
		}
	}
	if len(sources) == 0 {
		add(Embedded())
	}
	return sources, nil
}

// fromToken builds the sources of one spec token.
func fromToken(token string, client *http.Client) ([]pricing.Source, error) {
	kind, arg, hasArg := strings.Cut(token, ":")
	kind = strings.ToLower(strings.TrimSpace(kind))
	arg = strings.TrimSpace(arg)
	if hasArg && (kind == "custom" || kind == "azure" || strings.Contains(arg, "://")) {
		// Errors quote the token; a URL's query or user info may be a secret.
		token = kind + ":" + redact.URL(arg)
	}
	if hasArg && arg == "" {
		return nil, fmt.Errorf("price source %q: nothing after the colon (accepted: %s)", token, specHelp)
	}
	switch kind {
	case "embedded":
		if hasArg {
			return nil, fmt.Errorf("price source %q: embedded takes no argument", token)
		}
		return []pricing.Source{Embedded()}, nil
	case "gpuhunt":
		return gpuhuntFromSpec(token, arg, client)
	case "skypilot":
		return skypilotFromSpec(token, arg, client)
	case "azure":
		if !hasArg {
			return []pricing.Source{NewAzure(DefaultAzureURL, client)}, nil
		}
		if err := checkURL(arg); err != nil {
			return nil, fmt.Errorf("price source %q: %w", token, err)
		}
		return []pricing.Source{NewAzure(arg, client)}, nil
	case "custom":
		if !hasArg {
			return nil, fmt.Errorf("price source %q: custom needs a URL, e.g. custom:https://rates.internal/gpus.csv", token)
		}
		if err := checkURL(arg); err != nil {
			return nil, fmt.Errorf("price source %q: %w", token, err)
		}
		return []pricing.Source{NewCustom(arg, client)}, nil
	}
	hint := ""
	if near := nearest(kind, specKinds); near != "" {
		if hasArg {
			near += ":" + arg
		}
		hint = fmt.Sprintf("; did you mean %q?", near)
	}
	return nil, fmt.Errorf("price source %q: unknown%s (accepted: %s)", token, hint, specHelp)
}

// gpuhuntFromSpec builds "gpuhunt" (every published catalog) or
// "gpuhunt:PROVIDER".
func gpuhuntFromSpec(token, provider string, client *http.Client) ([]pricing.Source, error) {
	if provider == "" {
		sources := make([]pricing.Source, len(GPUHuntProviders))
		for i, p := range GPUHuntProviders {
			sources[i] = NewGPUHunt(DefaultGPUHuntURL, []string{p}, client)
		}
		return sources, nil
	}
	provider = strings.ToLower(provider)
	switch {
	case slices.Contains(GPUHuntProviders, provider):
		return []pricing.Source{NewGPUHunt(DefaultGPUHuntURL, []string{provider}, client)}, nil
	case slices.Contains(gpuhuntOnlineProviders, provider):
		return nil, fmt.Errorf("price source %q: gpuhunt publishes no catalog for %s (it queries it live); published: %s",
			token, provider, strings.Join(GPUHuntProviders, ", "))
	}
	hint := ""
	if near := nearest(provider, GPUHuntProviders); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", "gpuhunt:"+near)
	}
	return nil, fmt.Errorf("price source %q: unknown gpuhunt provider%s (published: %s)",
		token, hint, strings.Join(GPUHuntProviders, ", "))
}

// skypilotFromSpec builds "skypilot", "skypilot:CLOUD" or "skypilot:URL".
func skypilotFromSpec(token, arg string, client *http.Client) ([]pricing.Source, error) {
	if arg == "" {
		sources := make([]pricing.Source, len(SkyPilotDefaultClouds))
		for i, cloud := range SkyPilotDefaultClouds {
			sources[i] = NewSkyPilot([]string{fmt.Sprintf(SkyPilotCatalogURL, cloud)}, client)
		}
		return sources, nil
	}
	if strings.Contains(arg, "://") {
		if err := checkURL(arg); err != nil {
			return nil, fmt.Errorf("price source %q: %w", token, err)
		}
		return []pricing.Source{NewSkyPilot([]string{arg}, client)}, nil
	}
	cloud := strings.ToLower(arg)
	if !skypilotCloudName.MatchString(cloud) {
		return nil, fmt.Errorf("price source %q: %q is neither a cloud name (lambda, vast, ...) nor a URL", token, arg)
	}
	return []pricing.Source{NewSkyPilot([]string{fmt.Sprintf(SkyPilotCatalogURL, cloud)}, client)}, nil
}

// checkURL accepts an absolute http or https URL.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%s is not an http(s) URL", redact.URL(raw))
	}
	return nil
}

// nearest returns the candidate nearest to s by edit distance, or "" when
// none is close (half of s or more would change).
func nearest(s string, candidates []string) string {
	best, d := suggest.Closest(s, candidates)
	if d > len(s)/2 {
		return ""
	}
	return best
}
