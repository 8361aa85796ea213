import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The request/response examples in docs/dialects/NAME.md, replayed against
/// a live server of that dialect: documentation that cannot go stale.
struct DocExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func page(_ profile: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/dialects/\(profile).md"), encoding: .utf8)
    }

    @Test(arguments: Dialects.names)
    func examplesMatchTheServer(profile: String) async throws {
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "d", count: 32)))
        options.profile = profile
        try options.applyDialectSettings()
        try await Self.replay("docs/dialects/\(profile).md", options: options)
    }

    /// docs/graphql.md: an oauth2 server with token failures in the GraphQL body.
    @Test func graphQLExamplesMatchTheServer() async throws {
        var options = ServerOptions(signingKey: try SigningKey(secret: String(repeating: "d", count: 32)))
        options.graphQLAuthErrors = .body
        try await Self.replay("docs/graphql.md", options: options)
    }

    static func replay(_ path: String, options: ServerOptions) async throws {
        let examples = try DocExample.parse(try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        #expect(examples.count >= 3, "\(path) has too few examples")
        try await TestServer.run(options) { server in
            var variables: [String: String] = [:]
            for (index, example) in examples.enumerated() {
                let label = "\(path) example \(index + 1) (\(example.method) \(example.path))"
                let fill = { (text: String) throws -> String in try DocExample.substitute(text, variables, label: label) }
                var headers = HTTPFields()
                for (name, value) in example.headers { headers[HTTPField.Name(name)!] = try fill(value) }
                let response = try await server.send(
                    HTTPRequest.Method(example.method)!, try fill(example.path), headers: headers,
                    body: try example.body.map(fill))
                #expect(response.status.code == example.status, "\(label): \(response.text)")
                for (name, value) in example.expectedHeaders {
                    let actual = response.headers[HTTPField.Name(name)!]
                    #expect(DocExample.matches(value, actual), "\(label): header \(name) is \(actual ?? "absent")")
                    // A wildcard header becomes a variable named after it, e.g. {{authorization}}.
                    if let actual, value.hasPrefix("<") {
                        DocExample.set(name.lowercased().replacingOccurrences(of: "-", with: "_"), actual, in: &variables)
                    }
                }
                if let expected = example.expectedBody {
                    let actual = try JSONSerialization.jsonObject(with: Data(buffer: response.body))
                    let want = try JSONSerialization.jsonObject(with: Data(expected.utf8))
                    #expect(DocExample.matches(want, actual), "\(label): body is \(response.text)")
                    DocExample.capture(actual, into: &variables)
                }
            }
        }
    }

    @Test(arguments: Dialects.names)
    func errorTableIsCurrent(profile: String) throws {
        let page = try Self.page(profile)
        let table = ErrorTable.table(try #require(ErrorTable.rows(forDialect: profile)))
        #expect(
            page.contains("<!-- errors:begin -->\n\(table)<!-- errors:end -->"),
            "docs/dialects/\(profile).md error table is stale: run scripts/regen-docs.sh")
        // A dialect built in as a file shows that file.
        if let file = BuiltinDialects.file(profile) {
            let block =
                "<!-- file:begin -->\n<details><summary>dialects/\(profile).yaml</summary>\n\n```yaml\n\(file)```\n\n</details>\n<!-- file:end -->"
            #expect(page.contains(block), "docs/dialects/\(profile).md's dialect file is stale: run scripts/regen-docs.sh")
        }
    }
}

/// One `http` block and the `http-response` block after it.
struct DocExample {
    var method: String, path: String, headers: [(String, String)], body: String?
    var status: Int, expectedHeaders: [(String, String)], expectedBody: String?

    static func parse(_ markdown: String) throws -> [DocExample] {
        var blocks: [(String, [String])] = []
        var current: (String, [String])? = nil
        for line in markdown.components(separatedBy: "\n") {
            if var block = current {
                if line == "```" { blocks.append(block); current = nil } else { block.1.append(line); current = block }
            } else if line == "```http" || line == "```http-response" {
                current = (String(line.dropFirst(3)), [])
            }
        }
        var examples: [DocExample] = []
        var index = 0
        while index < blocks.count {
            let request = blocks[index]
            try #require(
                request.0 == "http" && index + 1 < blocks.count && blocks[index + 1].0 == "http-response",
                "every http block must be followed by an http-response block")
            let response = blocks[index + 1]
            let (requestLine, requestHeaders, requestBody) = split(request.1)
            let (statusLine, responseHeaders, responseBody) = split(response.1)
            let first = requestLine.split(separator: " ")
            let status = try #require(Int(statusLine.split(separator: " ")[1]))
            examples.append(
                DocExample(
                    method: String(first[0]), path: String(first[1]), headers: requestHeaders, body: requestBody,
                    status: status, expectedHeaders: responseHeaders, expectedBody: responseBody))
            index += 2
        }
        return examples
    }

    private static func split(_ lines: [String]) -> (String, [(String, String)], String?) {
        var headers: [(String, String)] = []
        var rest = lines.dropFirst()
        while let line = rest.first, !line.isEmpty {
            let colon = line.firstIndex(of: ":")!
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            rest = rest.dropFirst()
        }
        let body = rest.dropFirst().joined(separator: "\n")
        return (lines[0], headers, body.isEmpty ? nil : body)
    }

    static func substitute(_ text: String, _ variables: [String: String], label: String) throws -> String {
        var result = text
        for match in text.matches(of: /\{\{(\w+)\}\}/) {
            let value = try #require(variables[String(match.1)], "\(label): no earlier response had \(match.1)")
            result = result.replacingOccurrences(of: String(match.0), with: value)
        }
        return result
    }

    /// Expected values of the form `<...>` match anything; objects must have the same keys.
    static func matches(_ expected: Any, _ actual: Any?) -> Bool {
        if let text = expected as? String, text.hasPrefix("<"), text.hasSuffix(">") { return actual != nil }
        switch (expected, actual) {
        case (let e as [String: Any], let a as [String: Any]):
            return Set(e.keys) == Set(a.keys) && e.allSatisfy { matches($0.value, a[$0.key]) }
        case (let e as [Any], let a as [Any]):
            return e.count == a.count && zip(e, a).allSatisfy { matches($0, $1) }
        case (let e as NSObject, let a as NSObject):
            return e == a
        default:
            return false
        }
    }

    /// Strings become variables, those of nested objects too (an envelope's
    /// `data`, Cognito's `AuthenticationResult`); the value a name had
    /// before is kept as `previous_<name>`.
    static func capture(_ json: Any, into variables: inout [String: String]) {
        guard let object = json as? [String: Any] else { return }
        for (key, value) in object {
            if let text = value as? String { set(key, text, in: &variables) }
        }
        for value in object.values where value is [String: Any] { capture(value, into: &variables) }
    }

    static func set(_ name: String, _ value: String, in variables: inout [String: String]) {
        if let old = variables[name], old != value { variables["previous_\(name)"] = old }
        variables[name] = value
    }
}
