// The heuristic extractor's word lists. They only ever decide what text
// looks like, never a stored format, so they may grow freely.
#include <unordered_map>
#include <unordered_set>

#include "world/extract_internal.h"

namespace limbic::world::internal {
namespace {

// Word tables, packed by hand.
// clang-format off
// Words that are capitalised because they start a sentence or a heading,
// or are capitalised by convention without naming anything a world model
// wants (days, months, "I"). Lower case.
constexpr std::string_view kStopWords[] = {
    // articles, pronouns, determiners
    "a", "an", "the", "i", "me", "my", "mine", "we", "us", "our", "ours", "you", "your", "yours",
    "he", "him", "his", "she", "her", "hers", "it", "its", "they", "them", "their", "theirs",
    "this", "that", "these", "those", "there", "here", "who", "whom", "whose", "what", "which",
    "where", "when", "why", "how", "some", "any", "all", "each", "every", "both", "either",
    "neither", "none", "no", "not", "nothing", "something", "anything", "everything", "someone",
    "anyone", "everyone", "nobody", "somebody", "everybody", "other", "another", "such", "same",
    "own", "many", "much", "more", "most", "few", "fewer", "less", "least", "several",
    // conjunctions, prepositions
    "and", "or", "but", "nor", "so", "yet", "if", "then", "else", "because", "since", "although",
    "though", "while", "unless", "until", "after", "before", "once", "as", "at", "by", "for",
    "from", "in", "into", "of", "off", "on", "onto", "out", "over", "per", "to", "under", "up",
    "upon", "via", "with", "within", "without", "about", "above", "across", "against", "along",
    "among", "around", "behind", "below", "beside", "between", "beyond", "during", "except",
    "inside", "near", "outside", "through", "throughout", "toward", "towards",
    // auxiliaries and common verbs that start sentences in notes
    "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "doing",
    "have", "has", "had", "having", "will", "would", "shall", "should", "can", "could", "may",
    "might", "must", "need", "needs", "let", "lets", "get", "got", "gets", "make", "made", "take",
    "took", "give", "gave", "go", "went", "goes", "come", "came", "see", "saw", "seen", "look",
    "looked", "looking", "check", "checked", "ask", "asked", "tell", "told", "call", "called",
    "meet", "met", "talk", "talked", "discuss", "discussed", "review", "reviewed", "fix", "fixed",
    "deploy", "deployed", "merge", "merged", "ship", "shipped", "release", "released", "start",
    "started", "finish", "finished", "continue", "continued", "try", "tried", "add", "added",
    "remove", "removed", "update", "updated", "move", "moved", "write", "wrote", "read", "send",
    "sent", "spend", "spent", "work", "worked", "working", "plan", "planned", "follow", "followed",
    "remember", "note", "noted", "think", "thought", "feel", "felt", "found", "find", "keep",
    "kept", "set", "put", "run", "ran", "use", "used", "using", "thanks", "thank", "please", "say",
    "said", "says", "agreed", "decided", "wait", "waiting", "learned", "learnt", "investigate",
    "investigated", "debug", "debugged", "test", "tested", "refactor", "refactored", "implement",
    "implemented", "document", "documented", "setup", "prepare", "prepared", "schedule",
    "scheduled", "cancel", "cancelled", "canceled", "skip", "skipped", "pair", "paired", "block",
    "blocked", "open", "opened", "close", "closed", "create", "created", "build", "built", "join",
    "joined", "leave", "left", "buy", "bought", "pay", "paid", "fyi",
    // adverbs, adjectives, interjections
    "also", "just", "only", "still", "even", "again", "already", "always", "never", "often",
    "sometimes", "usually", "maybe", "perhaps", "probably", "definitely", "really", "very", "too",
    "quite", "now", "later", "soon", "today", "tonight", "yesterday", "tomorrow", "finally",
    "first", "second", "third", "last", "next", "new", "old", "good", "great", "bad", "big",
    "small", "quick", "long", "short", "important", "urgent", "overall", "however", "therefore",
    "meanwhile", "otherwise", "instead", "anyway", "besides", "hence", "thus", "well", "yes", "ok",
    "okay", "hi", "hello", "hey", "dear", "oh", "wow", "lol", "nice", "cool", "sure", "oops",
    "sorry", "welcome", "cheers", "regards", "best", "kind", "morning", "afternoon", "evening",
    "night", "week", "weekend", "day", "month", "year", "quarter", "eod", "eow", "asap", "etc",
    // days and months
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue",
    "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "january", "february", "march",
    "april", "june", "july", "august", "september", "october", "november", "december", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    // headings of daily logs
    "notes", "todo", "todos", "tasks", "task", "log", "daily", "weekly", "monthly", "meeting",
    "meetings", "summary", "standup", "ideas", "idea", "agenda", "action", "actions", "items",
    "item", "updates", "misc", "links", "journal", "retro", "retrospective", "plans", "goals",
    "goal", "questions", "question", "decisions", "decision", "blockers", "blocker", "progress",
    "status", "steps", "wins", "learnings", "highlights", "reflection", "reflections", "inbox",
    "backlog", "followups", "follow-up", "follow-ups", "reminder", "reminders", "context",
    "background", "problem", "solution", "result", "results", "outcome", "issue", "issues", "bug",
    "bugs", "feature", "features", "fixes", "changes", "change", "done",
    // titles
    "mr", "mrs", "ms", "dr", "prof", "sir",
    // everyday acronyms
    "api", "apis", "pr", "prs", "ci", "cd", "qa", "ui", "ux", "id", "ids", "url", "urls", "http",
    "https", "json", "yaml", "csv", "pdf", "html", "css", "cli", "sdk", "tbd", "wip", "eta", "tl",
    "dr", "imo", "imho", "afaik", "btw", "nb", "ps", "am", "pm", "utc", "ooo", "pto", "rfc", "faq",
    "mvp", "kpi", "okr", "okrs", "poc", "ai", "ml", "llm", "llms", "cpu", "gpu", "ram", "os", "db",
    "vm", "vms", "tls", "ssl", "sso", "ssh", "dns", "vpn", "sla", "slo", "sli", "sow", "nda", "roi",
    "p0", "p1", "p2", "sev1", "sev2", "oncall",
    // quarters and halves of a year
    "q1", "q2", "q3", "q4", "h1", "h2",
};

// Known tools, spelled as their makers spell them. Single words that are
// also everyday English ("Go", "Express", "Signal") are left out: a
// sentence starting with one would make it a tool.
constexpr std::string_view kTools[] = {
    // languages
    "Python", "Rust", "Golang", "Java", "JavaScript", "TypeScript", "C++", "C#", "Ruby", "PHP",
    "Kotlin", "Swift", "Scala", "Haskell", "Elixir", "Erlang", "Clojure", "Lua", "Perl", "Dart",
    "Zig", "OCaml", "Bash", "Zsh", "SQL", "WebAssembly", "Wasm", "Fortran", "COBOL", "Solidity",
    // databases, queues, search
    "PostgreSQL", "Postgres", "MySQL", "MariaDB", "SQLite", "MongoDB", "Redis", "Valkey",
    "Cassandra", "DynamoDB", "Elasticsearch", "OpenSearch", "ClickHouse", "Snowflake", "BigQuery",
    "Redshift", "RocksDB", "LevelDB", "CockroachDB", "Neo4j", "InfluxDB", "TimescaleDB",
    "Memcached", "etcd", "Kafka", "Apache Kafka", "RabbitMQ", "NATS", "Pulsar", "ZeroMQ",
    "Supabase", "Firebase", "DuckDB", "Pinecone", "Qdrant", "Milvus", "Weaviate", "pgvector",
    "FAISS",
    // infrastructure, operating systems, observability
    "Docker", "Kubernetes", "K8s", "Podman", "Terraform", "OpenTofu", "Pulumi", "Ansible", "Helm",
    "Nginx", "HAProxy", "Envoy", "Istio", "Linkerd", "Consul", "Vault", "Nomad", "Prometheus",
    "Grafana", "Loki", "Datadog", "Sentry", "PagerDuty", "Opsgenie", "Splunk", "Kibana", "Logstash",
    "Jaeger", "OpenTelemetry", "Linux", "Ubuntu", "Debian", "Fedora", "CentOS", "Alpine", "Windows",
    "macOS", "iOS", "Android", "FreeBSD", "systemd", "Caddy", "Traefik", "Jenkins", "CircleCI",
    "Travis CI", "Buildkite", "ArgoCD", "Argo CD", "Spinnaker",
    // cloud
    "AWS", "S3", "EC2", "EKS", "ECS", "SQS", "SNS", "RDS", "CloudFront", "CloudWatch", "AWS Lambda",
    "Amazon S3", "GCP", "Google Cloud", "GKE", "Azure", "Heroku", "Vercel", "Netlify", "Cloudflare",
    "DigitalOcean", "Fly.io", "Hetzner", "Linode", "OpenShift",
    // developer services and collaboration
    "GitHub", "GitLab", "Bitbucket", "Git", "GitHub Actions", "Jira", "Confluence", "Slack",
    "Discord", "Zoom", "Notion", "Figma", "Trello", "Asana", "Gmail", "Google Docs", "Google Drive",
    "Google Meet", "Microsoft Teams", "Outlook", "Dropbox", "OneDrive", "Miro", "Loom", "Telegram",
    "WhatsApp", "Mattermost", "Zendesk", "Intercom", "HubSpot", "Salesforce", "Stripe", "Twilio",
    "SendGrid", "Okta", "Auth0", "Zapier", "Airtable", "Obsidian", "Excel", "Tableau", "Looker",
    "Metabase", "Postman", "npm", "pnpm", "Yarn", "pip", "Poetry", "Cargo", "Bazel", "CMake",
    "Gradle", "Maven", "Webpack", "Vite", "Babel", "ESLint", "Prettier", "VS Code", "VSCode", "Vim",
    "Neovim", "Emacs", "IntelliJ", "Xcode", "Homebrew", "Nix", "Clang", "GCC", "LLVM", "Valgrind",
    "GDB", "Boost", "Catch2", "Copilot", "ChatGPT", "Ollama", "vLLM", "llama.cpp", "Hugging Face",
    "LangChain",
    // frameworks and libraries
    "React", "Vue", "Vue.js", "Angular", "Svelte", "Node.js", "NodeJS", "Deno", "Django", "Flask",
    "FastAPI", "Rails", "Ruby on Rails", "Spring Boot", "Next.js", "Nuxt", "GraphQL", "gRPC",
    "Protobuf", "Airflow", "Spark", "Apache Spark", "Hadoop", "dbt", "Flink", "Celery", "Sidekiq",
    "PyTorch", "TensorFlow", "NumPy", "pandas", "Jupyter", "scikit-learn", "Tailwind", "Bootstrap",
    "jQuery", "Redux", "Electron", "Qt", "OpenSSL", "OAuth", "Kubeflow", "MLflow",
};

constexpr std::string_view kCompanyWords[] = {
    "inc", "inc.", "corp", "corp.", "corporation", "ltd", "ltd.", "llc", "gmbh", "ag", "sa", "labs",
    "technologies", "systems", "software", "group",
};
// clang-format on

std::string Lower(std::string_view s) { return AsciiLower(s); }

}  // namespace

bool IsStopWord(std::string_view lower) {
  static const std::unordered_set<std::string_view> words(std::begin(kStopWords),
                                                          std::end(kStopWords));
  return words.count(lower) != 0;
}

std::string_view KnownTool(std::string_view lower) {
  static const auto* tools = [] {
    auto* m = new std::unordered_map<std::string, std::string_view>;
    for (std::string_view t : kTools) m->emplace(Lower(t), t);
    return m;
  }();
  auto it = tools->find(std::string(lower));
  return it == tools->end() ? std::string_view() : it->second;
}

bool IsCompanyWord(std::string_view lower) {
  static const std::unordered_set<std::string_view> words(std::begin(kCompanyWords),
                                                          std::end(kCompanyWords));
  return words.count(lower) != 0;
}

}  // namespace limbic::world::internal
