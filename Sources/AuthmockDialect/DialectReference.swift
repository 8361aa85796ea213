import AuthmockFileFormat
import AuthmockServer
import DriverProtocol
import Foundation
import Yams

extension DialectFormat {
    /// The worked example of docs/dialects.md, printed by `authmock dialects
    /// --example`: a backend none of the built-in dialects match (its own
    /// paths, nested fields and answers, a refresh token in a header, a dead
    /// session answered 403 with a vendor code).
    public static let example = """
        # A dialect file: how Acme's mobile backend signs in, refreshes and says no.
        dialect: acme
        summary: "Acme's mobile backend: v2 sessions, nested answers, 403 for a dead session"
        sign_in:
          path: /v2/session
          # The body is {"credentials": {"login": ..., "secret": ...}}.
          username: credentials.login
          password: credentials.secret
        refresh:
          path: /v2/session/renew
          refresh_token: {header: X-Refresh-Token}
        tokens:
          body:
            ok: true
            session:
              access: "{access_token}"
              refresh: "{refresh_token}"
              ttl: "{expires_in:string}"
              user: "{user}"
        errors:
          body:
            ok: false
            problem: {code: "{code}", text: "{message}"}
          answers:
            bad_request: {status: 400, code: 1000, message: Bad request}
            wrong_credentials: {status: 401, code: 1001, message: Wrong login or secret}
            refresh_refused: {status: 403, code: 1403, message: "Session over: sign in again"}
            access_refused: {status: 401, code: 1401, message: Not signed in}
            access_token_expired:
              status: 401
              code: 1402
              message: Token expired
              headers: {WWW-Authenticate: 'Bearer error="invalid_token"'}
            insufficient_scope: {status: 403, code: 1300, message: Not allowed}
        settings:
          access_ttl: 900
          refresh_ttl: 2592000

        """

    /// The JSON Schema of dialect files.
    public static func jsonSchema() -> String {
        SchemaWriter.document(
            dialect, title: "authmock dialect", source: "`authmock dialects --schema` from Sources/AuthmockDialect/DialectFormat.swift")
    }

    /// The key reference of docs/dialects.md: every key of the format, every
    /// situation an answer can name, every placeholder.
    public static func referenceMarkdown() -> String {
        // Where each key is used: read from the built-in files as written, so
        // the examples are the files', and no Swift names a vendor.
        let builtins = BuiltinDialects.names.compactMap { name in
            BuiltinDialects.file(name).flatMap { try? Yams.load(yaml: $0) }.map { (name: name, tree: $0) }
        }
        func usedBy(_ path: [String]) -> String {
            let users = builtins.filter { contains($0.tree, path[...]) }.map(\.name)
            return users.count == builtins.count ? "all" : users.joined(separator: ", ")
        }
        var out = "### Keys\n\n| key | required | what it says | built-in dialects that write it |\n| --- | --- | --- | --- |\n"
        func walk(_ spec: ObjectSpec, _ prefix: String) {
            for field in spec.fields {
                let key = prefix + field.name
                let used = usedBy(key.split(separator: ".").map(String.init))
                out += "| `\(key)` | \(field.required ? "yes" : "") | \(escape(field.doc))\(choices(field.shape)) | \(used) |\n"
                switch field.shape {
                case .object(let nested) where nested.name != "settings": walk(nested, key + ".")
                case .map(.object(let nested), _): walk(nested, key + ".KEY.")
                default: break
                }
            }
        }
        walk(dialect, "")
        out += "\n`settings` takes the keys of a scenario's `server:` (docs/scenarios.md); a flag, the environment or `--config` still wins.\n"
        out += "\n### Situations (`errors.answers`)\n\nA situation without an answer of its own takes its group's.\n\n"
        out += "| key | when | built-in dialects that answer it |\n| --- | --- | --- |\n"
        for (key, doc) in Situation.answerKeys { out += "| `\(key)` | \(escape(doc)) | \(usedBy(["errors", "answers", key])) |\n" }
        out += "\n### Placeholders\n\n| placeholder | in | value |\n| --- | --- | --- |\n"
        for placeholder in Placeholder.allCases {
            let place =
                Placeholder.success.contains(placeholder)
                ? "`tokens`"
                : Placeholder.error.contains(placeholder) ? "`errors`" : Placeholder.document.contains(placeholder) ? "`documents`" : "`resources`"
            out += "| `{\(placeholder.rawValue)}` | \(place) | \(escape(placeholder.doc)) |\n"
        }
        return out
    }

    /// Whether a YAML tree (merge keys resolved) holds the key path; `KEY`
    /// stands for any key of a mapping.
    private static func contains(_ node: Any, _ path: ArraySlice<String>) -> Bool {
        guard let first = path.first else { return true }
        guard let mapping = node as? [String: Any] else { return false }
        if first == "KEY" { return mapping.values.contains { contains($0, path.dropFirst()) } }
        return mapping[first].map { contains($0, path.dropFirst()) } ?? false
    }

    private static func choices(_ shape: Shape) -> String {
        if case .string(let allowed?) = shape { return " (one of: \(allowed.joined(separator: ", ")))" }
        return ""
    }

    private static func escape(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
}
