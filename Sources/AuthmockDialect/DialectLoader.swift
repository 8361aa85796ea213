public import AuthmockFileFormat
import AuthmockCore
import AuthmockModel
public import AuthmockServer
public import DriverProtocol
import Foundation
import HTTPTypes
import Yams

/// A dialect file read and checked: what the server serves, and the server
/// settings the file gives as defaults (flags and scenarios still win).
public struct LoadedDialect: Sendable {
    public var description: DialectDescription
    public var settings: ServerSettings
    public var file: String

    /// Serves the dialect with `options`, its settings where `given` (the
    /// keys a flag, the environment or a config file set) has none.
    public func apply(to options: inout ServerOptions, except given: Set<String> = []) {
        for setting in ServerSetting.all where !given.contains(setting.key) {
            if let value = settings[setting.key] { setting.apply(value, to: &options) }
        }
        options.dialect = description
        options.profile = description.name
    }

    /// A case server of the dialect: only the settings that are traits of
    /// the backend (a refresh revoking the replaced access token, RS256
    /// signing); a case's lifetimes and rotation are the case's own.
    public func applyTraits(to options: inout ServerOptions) {
        for setting in ServerSetting.all where setting.backendTrait {
            if let value = settings[setting.key] { setting.apply(value, to: &options) }
        }
        options.dialect = description
    }
}

/// Reads dialect files (docs/dialects.md): YAML checked against
/// `DialectFormat`, then compiled into a `DialectDescription`. Every problem
/// names file:line:column, like a scenario's.
public enum DialectLoader {
    /// Whether YAML text is a dialect file rather than a case: its top-level `dialect:` key.
    public static func isDialect(_ text: String) -> Bool {
        guard let node = try? YAMLFile.compose(text, file: ""), case .mapping(let mapping) = node else { return false }
        return mapping.keys.contains { $0.string == "dialect" }
    }

    /// A built-in dialect file (`dialects/NAME.yaml`, inside the binary) read
    /// like a user's; nil for `oauth2` and unknown names.
    public static func builtin(_ name: String) -> LoadedDialect? {
        guard let text = BuiltinDialects.file(name) else { return nil }
        return try? parse(text, file: "dialects/\(name).yaml", builtin: true)
    }

    /// A `--dialect` argument: a dialect file, or, where no file has that
    /// name, a built-in dialect's (`--dialect NAME` serves the built-in,
    /// as `--profile NAME` does). Neither: "no such file", with the
    /// built-in names and a "did you mean".
    public static func load(fileOrBuiltin argument: String) throws(ScenarioError) -> LoadedDialect {
        let (text, file, builtin) = try text(fileOrBuiltin: argument).get()
        return try parse(text, file: file, builtin: builtin)
    }

    /// Sets `options` to serve a `--dialect` argument (`serve`, `proxy`,
    /// AuthmockTesting's mocks): `oauth2`, the one dialect written in Swift
    /// and so no file, or what `load(fileOrBuiltin:)` reads. The dialect's
    /// settings are defaults: a key in `given` (set by a flag, the
    /// environment or a config file) keeps its value.
    public static func serve(_ argument: String, with options: inout ServerOptions, except given: Set<String> = []) throws {
        guard argument == DialectName.oauth2, !FileManager.default.fileExists(atPath: argument) else {
            return try load(fileOrBuiltin: argument).apply(to: &options, except: given)
        }
        options.dialect = nil
        options.profile = argument
        try options.applyDialectSettings(except: given)
    }

    /// A `--dialect` argument's text and the name to report it by: the
    /// file's, or a built-in dialect's where no file has the name.
    public static func text(fileOrBuiltin argument: String) -> Result<(text: String, file: String, builtin: Bool), ScenarioError> {
        let exists = FileManager.default.fileExists(atPath: argument)
        if !exists, let text = BuiltinDialects.file(argument) { return .success((text, "dialects/\(argument).yaml (built in)", true)) }
        switch YAMLFile.readText(argument) {
        case .success(let text): return .success((text, argument, false))
        case .failure(let problems):
            var error = problems.list[0]
            if !exists {
                error = ScenarioError(
                    file: error.file, line: error.line, column: error.column,
                    message: error.message + "; nor is it a built-in dialect (\(BuiltinDialects.names.joined(separator: ", ")))"
                        + Suggestion.hint(for: argument, in: BuiltinDialects.names))
            }
            return .failure(error)
        }
    }

    public static func load(file: String) throws(ScenarioError) -> LoadedDialect {
        try YAMLFile.readText(file).flatMap { parseAll($0, file: file) }.firstProblemThrown()
    }

    /// Every problem of a file, in file order (empty when it is valid).
    public static func problems(file: String) -> [ScenarioError] {
        YAMLFile.readText(file).flatMap { parseAll($0, file: file) }.problems
    }

    public static func problems(_ text: String, file: String) -> [ScenarioError] {
        parseAll(text, file: file).problems
    }

    /// `builtin`: one of authmock's own files (`dialects/`), which may take a built-in dialect's name.
    public static func parse(_ text: String, file: String, builtin: Bool = false) throws(ScenarioError) -> LoadedDialect {
        try parseAll(text, file: file, builtin: builtin).firstProblemThrown()
    }

    static func parseAll(_ text: String, file: String, builtin: Bool = false) -> Result<LoadedDialect, YAMLFile.Problems> {
        let node: Node
        do {
            guard let composed = try YAMLFile.compose(text, file: file) else {
                return .failure(
                    .init(list: [ScenarioError(file: file, line: 1, column: 1, message: "the file is empty; expected a dialect mapping")]))
            }
            node = composed
        } catch let bomb as ScenarioError {
            return .failure(.init(list: [bomb]))
        } catch {
            return .failure(.init(list: [YAMLFile.problem(yaml: error, file: file, text: text)]))
        }
        if let bomb = YAMLFile.expansionProblem(node, file: file) { return .failure(.init(list: [bomb])) }
        let checker = SpecChecker(file: file)
        do throws(ScenarioError) {
            let value = try checker.check(node, .object(DialectFormat.dialect), "")
            let shapeProblems = checker.found.problems
            if !shapeProblems.isEmpty { return .failure(sorted(shapeProblems)) }
            let builder = DialectBuilder(checker: checker, file: file, builtin: builtin)
            let dialect = try builder.dialect(value)
            let ruleProblems = checker.found.problems
            return ruleProblems.isEmpty ? .success(dialect) : .failure(sorted(ruleProblems))
        } catch {
            return .failure(sorted(checker.found.problems + [error]))
        }
    }

    private static func sorted(_ problems: [ScenarioError]) -> YAMLFile.Problems {
        .init(list: problems.sorted { ($0.line, $0.column) < ($1.line, $1.column) })
    }
}

/// Builds the description from checked values; what remains are the rules
/// across fields (placeholders, answered situations, distinct endpoints).
private struct DialectBuilder {
    let checker: SpecChecker
    let file: String
    let builtin: Bool

    func dialect(_ value: SpecValue) throws(ScenarioError) -> LoadedDialect {
        let o = try value.object(checker, "dialect")
        let nameValue = try o.required("dialect", checker, at: value.mark)
        let name = try nameValue.string(checker, "dialect")
        if name.isEmpty || !name.allSatisfy({ ($0.isLowercase && $0.isASCII) || $0.isNumber || $0 == "-" }) {
            checker.found.add(checker.error(at: nameValue.mark, "dialect: '\(name)' must be lower-case letters, digits and dashes"))
        }
        if !builtin, Dialects.names.contains(name) {
            checker.found.add(
                checker.error(
                    at: nameValue.mark,
                    "dialect: '\(name)' is a built-in dialect; name yours differently (`--dialect \(name)` serves the built-in one)"))
        }
        let signInValue = try o.required("sign_in", checker, at: value.mark)
        let signInObject = try signInValue.object(checker, "sign_in")
        let signInEndpoint = try endpoint(signInValue, "sign_in")
        let signIn = DialectDescription.SignIn(
            method: signInEndpoint.method, path: signInEndpoint.path, match: signInEndpoint.match, encoding: signInEndpoint.encoding,
            alsoAccepts: signInEndpoint.alsoAccepts, username: signInObject["username"]?.string ?? "username",
            password: signInObject["password"]?.string ?? "password", defaultUser: signInObject["default_user"]?.string)
        if let value = signInObject["default_user"], value.string?.isEmpty != false {
            checker.found.add(checker.error(at: value.mark, "sign_in.default_user: expected a user name"))
        }
        for key in ["username", "password"] {
            if let field = signInObject[key], let name = field.string { checkFieldName(name, at: field.mark, "sign_in.\(key)") }
            if let field = signInObject[key], signIn.encoding == .form, field.string?.contains(".") == true {
                checker.found.add(checker.error(at: field.mark, "sign_in.\(key): a form has no nested fields; '\(field.string ?? "")' names one"))
            }
        }
        let refreshValue = try o.required("refresh", checker, at: value.mark)
        let refreshObject = try refreshValue.object(checker, "refresh")
        let via = refreshObject["via"]?.string.flatMap(DialectDescription.Refresh.Via.init(rawValue:))
        if via == .resources {
            return try dialect(o, at: value, name: name, signIn: signIn, refresh: try resourceRefresh(refreshValue))
        }
        if let renewed = refreshObject["renewed_access_token"] {
            checker.found.add(checker.error(at: renewed.mark, "refresh.renewed_access_token: only a refresh `via: resources` renews in a header"))
        }
        guard refreshObject["path"] != nil else {
            throw checker.error(
                at: refreshValue.mark, "refresh: missing required key 'path' (or `via: resources` for a backend without a refresh endpoint)")
        }
        let refreshEndpoint = try endpoint(refreshValue, "refresh")
        let accessToken = try refreshObject["access_token"].map { v throws(ScenarioError) in
            try location(v, "refresh.access_token", encoding: refreshEndpoint.encoding)
        }
        let accessTokenCopy = try refreshObject["access_token_copy"].map { v throws(ScenarioError) in
            try location(v, "refresh.access_token_copy", encoding: refreshEndpoint.encoding)
        }
        if let copyValue = refreshObject["access_token_copy"], accessToken == nil || accessToken == accessTokenCopy {
            checker.found.add(
                checker.error(
                    at: copyValue.mark, "refresh.access_token_copy: a second place needs a first, `refresh.access_token`, and differs from it"))
        }
        let refresh = DialectDescription.Refresh(
            method: refreshEndpoint.method, path: refreshEndpoint.path, match: refreshEndpoint.match, encoding: refreshEndpoint.encoding,
            alsoAccepts: refreshEndpoint.alsoAccepts,
            refreshToken: try location(
                try refreshObject.required("refresh_token", checker, at: refreshValue.mark), "refresh.refresh_token",
                encoding: refreshEndpoint.encoding),
            accessToken: accessToken, accessTokenCopy: accessTokenCopy,
            tokens: try refreshObject["tokens"].map { v throws(ScenarioError) in try answerTemplate(v, "refresh.tokens") },
            unrotatedRefreshToken: refreshObject["unrotated_refresh_token"]?.string.flatMap(DialectDescription.UnrotatedRefreshToken.init(rawValue:)),
            via: via, refreshTokenPattern: refreshObject["refresh_token_pattern"]?.string)
        // The router takes `/a/`, `//a` and `/a` for one path: two spellings of one would trap at start.
        if signIn.path != refresh.path, Self.routeKey(signIn.path) == Self.routeKey(refresh.path) {
            checker.found.add(
                checker.error(
                    at: refreshValue.mark,
                    "refresh.path: \(refresh.path) and sign_in.path \(signIn.path) are one path to the router (a trailing or doubled slash); write them alike or make them differ"
                ))
        }
        if signIn.method == refresh.method, signIn.path == refresh.path,
            signIn.match == refresh.match || signIn.match.isEmpty || refresh.match.isEmpty
        {
            checker.found.add(
                checker.error(
                    at: refreshValue.mark,
                    "refresh: \(refresh.method) \(refresh.path) is the sign-in endpoint too; give each its own method or path, or each a `match` that tells them apart"
                ))
        }
        return try dialect(o, at: value, name: name, signIn: signIn, refresh: refresh)
    }

    /// `refresh: {via: resources}`: no endpoint; the refresh token and the
    /// renewed access token travel in headers.
    func resourceRefresh(_ value: SpecValue) throws(ScenarioError) -> DialectDescription.Refresh {
        let o = try value.object(checker, "refresh")
        for key in [
            "method", "path", "match", "encoding", "access_token", "access_token_copy", "tokens", "unrotated_refresh_token", "refresh_token_pattern",
        ] {
            if let given = o[key] {
                checker.found.add(checker.error(at: given.mark, "refresh.\(key): a refresh `via: resources` has no endpoint of its own"))
            }
        }
        let refreshToken = try location(try o.required("refresh_token", checker, at: value.mark), "refresh.refresh_token", encoding: .json)
        var renewed: DialectDescription.TokenLocation? = nil
        if let renewedValue = o["renewed_access_token"] { renewed = try location(renewedValue, "refresh.renewed_access_token", encoding: .json) }
        // The refresh token goes where resources take the access token.
        if case .header(let name, _) = refreshToken, name.lowercased() == "authorization" {
        } else {
            checker.found.add(
                checker.error(
                    at: o["refresh_token"]?.mark,
                    "refresh.refresh_token: a refresh `via: resources` sends it in `Authorization`, where the access token goes"))
        }
        if let renewed, case .header = renewed {
        } else if renewed != nil {
            checker.found.add(
                checker.error(at: o["renewed_access_token"]?.mark, "refresh.renewed_access_token: a new access token comes back in a response header")
            )
        }
        return DialectDescription.Refresh(
            method: "", path: "", encoding: .json, refreshToken: refreshToken, accessToken: nil, via: .resources, renewedAccessToken: renewed)
    }

    /// The rest of a dialect, after its endpoints.
    func dialect(
        _ o: [String: SpecValue], at value: SpecValue, name: String, signIn: DialectDescription.SignIn, refresh: DialectDescription.Refresh
    ) throws(ScenarioError) -> LoadedDialect {
        let tokens = try answerTemplate(try o.required("tokens", checker, at: value.mark), "tokens")

        let errorsValue = try o.required("errors", checker, at: value.mark)
        let errorsObject = try errorsValue.object(checker, "errors")
        let errorBody = try template(try errorsObject.required("body", checker, at: errorsValue.mark), "errors.body", allowed: Placeholder.error)
        let answersValue = try errorsObject.required("answers", checker, at: errorsValue.mark)
        var answers: [String: DialectDescription.DeclaredError] = [:]
        for (key, answer) in try answersValue.object(checker, "errors.answers") {
            answers[key] = try declaredError(answer, "errors.answers.\(key)")
        }
        // Every situation a client can meet needs an answer: its own, or its group's.
        // A body in a type the endpoint does not read is one only where the file refuses it.
        let refuses = o["other_content_types"]?.string == DialectDescription.OtherContentTypes.refuse.rawValue
        var missing: [String] = []
        for situation in Situation.examples where situation.group != nil || situation == .wrongCredentials || situation.key == "client_unknown" {
            if case .body(.unsupportedMediaType) = situation, !refuses { continue }
            // An unknown client is one only where the file names the field.
            if case .unknownClient = situation, o["client_id"] == nil { continue }
            // A malformed refresh token is answered as an unknown one, which needs an answer, where the file does not tell them apart.
            if situation == .refreshTokenMalformed { continue }
            if answers[situation.key] == nil, situation.group.flatMap({ answers[$0] }) == nil, !missing.contains(situation.key) {
                missing.append(situation.key)
            }
        }
        if !missing.isEmpty {
            let groups = Set(Situation.examples.filter { missing.contains($0.key) }.compactMap(\.group)).sorted()
            let via = groups.isEmpty ? "" : " (or the group\(groups.count > 1 ? "s" : "") \(groups.map { "'\($0)'" }.joined(separator: ", ")))"
            checker.found.add(
                checker.error(at: answersValue.mark, "errors.answers: no answer for \(missing.map { "'\($0)'" }.joined(separator: ", "))\(via)"))
        }
        var resources: Template? = nil
        if let resourcesValue = o["resources"] {
            let body = try resourcesValue.object(checker, "resources").required("body", checker, at: resourcesValue.mark)
            resources = try template(body, "resources.body", allowed: Placeholder.resource)
            if resources?.path(to: .data) == nil {
                checker.found.add(checker.error(at: body.mark, "resources.body: must hold `{data}`, the resource's own answer, as a whole value"))
            }
        }
        checkErrorsIn2xx(answers, at: answersValue, errorBody: errorBody, successes: [tokens.body] + (resources.map { [$0] } ?? []))
        let jwt = try o["jwt"].map(jwtShape)
        let jwks = jwt?.servedJWKSPath
        checkRefreshTokenPattern(refresh.refreshTokenPattern, at: (try? o.required("refresh", checker, at: value.mark)), jwt: jwt)
        let signOut = try o["sign_out"].map { value throws(ScenarioError) in try self.signOut(value, signIn: signIn, refresh: refresh) }
        if let signOut, let jwks, signOut.method == "GET", Self.routeKey(jwks) == Self.routeKey(signOut.path) {
            checker.found.add(checker.error(at: o["sign_out"]?.mark, "sign_out: GET \(signOut.path) is where the JWKS is served"))
        }
        if let jwks, Self.routeKey(jwks) == Self.routeKey(signIn.path) || Self.routeKey(jwks) == Self.routeKey(refresh.path) {
            checker.found.add(checker.error(at: o["jwt"]?.mark, "jwt: the JWKS at \(jwks) would be the sign-in or refresh endpoint's path"))
        }
        let description = DialectDescription(
            name: name, summary: o["summary"]?.string ?? "A dialect declared in \((file as NSString).lastPathComponent)",
            signIn: signIn, refresh: refresh, tokens: tokens, errors: .init(body: errorBody, answers: answers), resources: resources,
            jwt: jwt,
            documents: try o["documents"].map { value throws(ScenarioError) in
                try documents(value, served: [signIn.path, refresh.path] + (signOut.map { [$0.path] } ?? []) + (jwks.map { [$0] } ?? []))
            },
            bearerScheme: o["bearer_scheme"]?.string.flatMap(DialectDescription.BearerScheme.init(rawValue:)),
            signOut: signOut,
            otherContentTypes: o["other_content_types"]?.string.flatMap(DialectDescription.OtherContentTypes.init(rawValue:)),
            clientID: o["client_id"]?.string,
            refreshOn: o["refresh_on"]?.string.flatMap(DialectDescription.RefreshSignal.init(rawValue:)))
        return LoadedDialect(
            description: description, settings: try YAMLFile.settings(o["settings"], checker: checker, path: "settings"), file: file)
    }

    /// `refresh.refresh_token_pattern`: a regular expression that takes the
    /// refresh tokens authmock issues for this file, or every refresh would be refused.
    func checkRefreshTokenPattern(_ pattern: String?, at refreshValue: SpecValue?, jwt: DialectDescription.JWTShape?) {
        guard let pattern else { return }
        let mark = (try? refreshValue?.object(checker, "refresh"))?["refresh_token_pattern"]?.mark ?? refreshValue?.mark
        let regex: Regex<AnyRegexOutput>
        do {
            regex = try Regex(pattern)
        } catch {
            checker.found.add(checker.error(at: mark, "refresh.refresh_token_pattern: not a regular expression: \(error)"))
            return
        }
        let issued = RefreshTokenSeal.examples(jwtClaims: jwt?.refreshClaims)
        if let refused = issued.first(where: { (try? regex.wholeMatch(in: $0)) == nil }) {
            let kind = jwt?.refreshClaims == nil ? "60 base64url characters" : "a JWT (`jwt.refresh_claims`)"
            checker.found.add(
                checker.error(
                    at: mark,
                    "refresh.refresh_token_pattern: must take the refresh tokens authmock issues (\(kind), such as \(refused)); this one refuses them"
                ))
        }
    }

    /// `documents:`: paths of their own, each a template of the server's URL and issuer.
    /// `served`: the file's endpoints and its JWKS path.
    func documents(_ value: SpecValue, served: [String]) throws(ScenarioError) -> [String: Template] {
        var out: [String: Template] = [:]
        var taken = Set(served.map(Self.routeKey))
        for (path, body) in try value.object(checker, "documents") {
            if !Self.isPlainPath(path) {
                checker.found.add(
                    checker.error(
                        at: body.mark, "documents: '\(path)' must be a plain path starting with '/' (no query, fragment, space or control character)")
                )
            } else if !taken.insert(Self.routeKey(path)).inserted || Self.isShared(path) {
                checker.found.add(
                    checker.error(at: body.mark, "documents: '\(path)' is served already (an endpoint of this file, or authmock's own)"))
            }
            out[path] = try template(body, "documents.\(path)", allowed: Placeholder.document)
        }
        return out
    }

    /// `jwt:`: an issuer path that is a path, and claims that neither replace
    /// the ones authmock's tokens need nor name a placeholder there is none of.
    func jwtShape(_ value: SpecValue) throws(ScenarioError) -> DialectDescription.JWTShape {
        let o = try value.object(checker, "jwt")
        var shape = DialectDescription.JWTShape(accessLeftOut: (o["access_left_out"]?.array ?? []).compactMap(\.string))
        if let pathValue = o["issuer_path"], let path = pathValue.string {
            if !Self.isPlainPath(path) || path.hasSuffix("/") || path.contains("//") {
                checker.found.add(
                    checker.error(at: pathValue.mark, "jwt.issuer_path: '\(path)' must start with '/', not end with one, and be a plain path"))
            } else if Self.isShared(path + "/.well-known/jwks.json") {
                checker.found.add(
                    checker.error(
                        at: pathValue.mark,
                        "jwt.issuer_path: '\(path)' would put the JWKS under a path authmock serves itself (/_authmock, /api/, /health, /metrics)"))
            }
            shape.issuerPath = path
        }
        if let pathValue = o["jwks_path"], let path = pathValue.string {
            if !Self.isPlainPath(path) || path.hasSuffix("/") || path.contains("//") {
                checker.found.add(
                    checker.error(at: pathValue.mark, "jwt.jwks_path: '\(path)' must start with '/', not end with one, and be a plain path"))
            } else if Self.isShared(path) {
                checker.found.add(
                    checker.error(
                        at: pathValue.mark, "jwt.jwks_path: '\(path)' is a path authmock serves itself (/_authmock, /api/, /health, /metrics)"))
            }
            shape.jwksPath = path
        }
        let reserved = [
            "access_claims": ["iss", "sub", "aud", "exp", "iat", "nbf", "jti", "client_id", "scope", "sid"],
            "id_token_claims": ["iss", "sub", "aud", "exp", "iat", "jti", "auth_time", "nonce", "at_hash", "azp", "sid"],
            "refresh_claims": ["iss", "sub", "aud", "exp", "iat", "jti", "azp", "sid", "scope"],
        ]
        for key in ["access_claims", "id_token_claims", "refresh_claims"] {
            guard let claimsValue = o[key] else { continue }
            var claims: [String: String] = [:]
            for (name, claim) in try claimsValue.object(checker, "jwt.\(key)") {
                let text = claim.string ?? ""
                if reserved[key]!.contains(name) {
                    checker.found.add(checker.error(at: claim.mark, "jwt.\(key).\(name): authmock sets this claim itself"))
                }
                let unknown = Self.braced(text).filter { !["user", "client_id"].contains($0) }
                if let first = unknown.first {
                    checker.found.add(
                        checker.error(at: claim.mark, "jwt.\(key).\(name): '{\(first)}' is not a placeholder here; expected {user} or {client_id}"))
                }
                claims[name] = text
            }
            switch key {
            case "access_claims": shape.accessClaims = claims
            case "id_token_claims": shape.idTokenClaims = claims
            default: shape.refreshClaims = claims
            }
        }
        return shape
    }

    /// A path as the router matches it: runs of `/` are one, and a trailing
    /// `/` is dropped (`//health/` is `/health`). Two paths of a dialect with
    /// one key would be one route registered twice, which traps at start.
    static func routeKey(_ path: String) -> String {
        let key = "/" + path.split(separator: "/").joined(separator: "/")
        return key
    }

    /// A path a route can be: it starts with `/`, holds no query or fragment,
    /// no space or control character, and is under 2,048 bytes.
    static func isPlainPath(_ path: String) -> Bool {
        path.hasPrefix("/") && path.utf8.count <= 2048
            && !path.unicodeScalars.contains { $0 == "?" || $0 == "#" || $0 == "%" || $0.value <= 0x20 || $0.value == 0x7F }
    }

    /// Paths every dialect serves the same way.
    /// Whether every dialect serves `path` itself. The echo resources under
    /// `/api/` give way to a dialect's endpoints (`/api/token/`);
    /// `/api/me` and `/api/admin/` do not, as the built-in cases call them.
    static func isShared(_ path: String) -> Bool {
        let path = routeKey(path)
        let trimmed = path
        let echoed = trimmed.hasPrefix("/api/") && trimmed != "/api/me" && trimmed != "/api/admin" && !trimmed.hasPrefix("/api/admin/")
        return (RouteClassification.isResource(path: trimmed) && !echoed) || path == "/health" || path == "/metrics" || path.hasPrefix("/_authmock")
    }

    func endpoint(
        _ value: SpecValue, _ what: String
    ) throws(ScenarioError) -> (
        method: String, path: String, match: DialectDescription.Match, encoding: DialectDescription.BodyEncoding,
        alsoAccepts: DialectDescription.BodyEncoding?
    ) {
        let o = try value.object(checker, what)
        let pathValue = try o.required("path", checker, at: value.mark)
        let path = try pathValue.string(checker, "\(what).path")
        if !Self.isPlainPath(path) || path.contains("*") || path.split(separator: "/").contains(where: { $0.hasPrefix(":") })
            || path.contains("{")
        {
            checker.found.add(
                checker.error(
                    at: pathValue.mark,
                    "\(what).path: '\(path)' must be a plain path starting with / (no query, fragment, space, control character, wildcard or parameter)"
                ))
        } else if Self.isShared(path) {
            checker.found.add(
                checker.error(
                    at: pathValue.mark,
                    "\(what).path: \(path) is served by authmock in every dialect (resources, /graphql, /health, /metrics, /_authmock)"))
        }
        let encoding = o["encoding"]?.string.flatMap(DialectDescription.BodyEncoding.init(rawValue:)) ?? .json
        let alsoAccepts = o["also_accepts"]?.string.flatMap(DialectDescription.BodyEncoding.init(rawValue:))
        if let also = o["also_accepts"], alsoAccepts == encoding {
            checker.found.add(checker.error(at: also.mark, "\(what).also_accepts: \(encoding.rawValue) is already the endpoint's encoding"))
        }
        var match = DialectDescription.Match()
        if let matchObject = o["match"]?.object {
            func strings(_ key: String) -> [String: String] { matchObject[key]?.object?.compactMapValues(\.string) ?? [:] }
            match = .init(query: strings("query"), headers: strings("headers"), body: strings("body"))
            for (name, item) in matchObject["headers"]?.object ?? [:] where HTTPField.Name(name) == nil {
                checker.found.add(checker.error(at: item.mark, "\(what).match.headers: '\(name)' is not a header name"))
            }
            for (name, item) in matchObject["body"]?.object ?? [:] where encoding == .form && name.contains(".") {
                checker.found.add(checker.error(at: item.mark, "\(what).match.body: a form has no nested fields; '\(name)' names one"))
            }
        }
        return (o["method"]?.string ?? "POST", path, match, encoding, alsoAccepts)
    }

    /// `sign_out:`: an endpoint of its own, naming the login by one token.
    func signOut(
        _ value: SpecValue, signIn: DialectDescription.SignIn, refresh: DialectDescription.Refresh
    ) throws(ScenarioError) -> DialectDescription.SignOut {
        let o = try value.object(checker, "sign_out")
        let endpoint = try endpoint(value, "sign_out")
        if let also = o["also_accepts"] {
            checker.found.add(checker.error(at: also.mark, "sign_out.also_accepts: a client signs out in one encoding, `encoding`"))
        }
        let refreshToken = try o["refresh_token"].map { v throws(ScenarioError) in
            try location(v, "sign_out.refresh_token", encoding: endpoint.encoding)
        }
        let accessToken = try o["access_token"].map { v throws(ScenarioError) in try location(v, "sign_out.access_token", encoding: endpoint.encoding)
        }
        if (refreshToken == nil) == (accessToken == nil) {
            checker.found.add(
                checker.error(at: value.mark, "sign_out: give exactly one of refresh_token and access_token, the token that names the login"))
        }
        let status = o["status"]?.integer ?? 204
        let body = try o["body"].map { v throws(ScenarioError) in try template(v, "sign_out.body", allowed: []) }
        if !(200...299).contains(status) || body != nil && [204, 205].contains(status) {
            checker.found.add(
                checker.error(
                    at: o["status"]?.mark ?? value.mark, "sign_out.status: a 2xx, and not 204 or 205 when the answer has a body; got \(status)"))
        }
        // Routes are one per method and path: another endpoint's, unless a `match` tells them apart.
        for (name, method, path, match) in [
            ("sign_in", signIn.method, signIn.path, signIn.match), ("refresh", refresh.method, refresh.path, refresh.match),
        ]
        where !path.isEmpty && Self.routeKey(path) == Self.routeKey(endpoint.path) {
            if path != endpoint.path || method == endpoint.method && (match == endpoint.match || match.isEmpty || endpoint.match.isEmpty) {
                checker.found.add(
                    checker.error(
                        at: value.mark,
                        "sign_out: \(endpoint.method) \(endpoint.path) is the \(name) endpoint too; give it its own method or path, or each a `match` that tells them apart"
                    ))
            }
        }
        return .init(
            method: endpoint.method, path: endpoint.path, match: endpoint.match, encoding: endpoint.encoding, refreshToken: refreshToken,
            accessToken: accessToken, status: status, body: body, headers: try headers(o["headers"], "sign_out.headers", allowed: []),
            refusesDeadToken: o["refuses_dead_token"]?.boolean ?? false)
    }

    /// A success answer (`tokens`, `refresh.tokens`): it must say the new access token.
    func answerTemplate(_ value: SpecValue, _ path: String) throws(ScenarioError) -> DialectDescription.AnswerTemplate {
        let o = try value.object(checker, path)
        if let statusValue = o["status"], let status = statusValue.integer, !(200...299).contains(status) || [204, 205].contains(status) {
            checker.found.add(
                checker.error(at: statusValue.mark, "\(path).status: a success answer with a body is 2xx other than 204 and 205, got \(status)"))
        }
        let tokens = DialectDescription.AnswerTemplate(
            status: o["status"]?.integer ?? 200,
            headers: try headers(o["headers"], "\(path).headers", allowed: Placeholder.success),
            body: try template(try o.required("body", checker, at: value.mark), "\(path).body", allowed: Placeholder.success))
        if !tokens.body.placeholders.contains(.accessToken) && !tokens.headers.values.contains(where: { $0.placeholders.contains(.accessToken) }) {
            checker.found.add(checker.error(at: value.mark, "\(path): the answer must say `{access_token}` somewhere (body or headers)"))
        }
        return tokens
    }

    /// A body field's dotted name (`credentials.login`) names at most
    /// `maxFieldDepth` levels, none empty: each level is an object a client
    /// sends and the server reads (5,000 levels overflowed the stack).
    func checkFieldName(_ name: String, at mark: Mark?, _ what: String) {
        let levels = name.split(separator: ".", omittingEmptySubsequences: false)
        if levels.count > Self.maxFieldDepth || levels.contains(where: \.isEmpty) || name.utf8.count > 256 {
            checker.found.add(
                checker.error(
                    at: mark,
                    "\(what): '\(name.prefix(40))\(name.count > 40 ? "…" : "")' must be at most \(Self.maxFieldDepth) dotted names, none empty, 256 bytes in all"
                ))
        }
    }

    static let maxFieldDepth = 16
    static let maxTemplateDepth = 64

    /// The names between `{` and the next `}` in `text`, in one pass (a
    /// backtracking pattern took 10 s over 5,000 `{`).
    static func braced(_ text: String) -> [String] {
        var names: [String] = []
        var open: String.Index? = nil
        for index in text.indices {
            if text[index] == "{" {
                open = text.index(after: index)
            } else if text[index] == "}", let start = open {
                names.append(String(text[start..<index]))
                open = nil
            }
        }
        return names
    }

    func location(
        _ value: SpecValue, _ path: String, encoding: DialectDescription.BodyEncoding
    ) throws(ScenarioError) -> DialectDescription.TokenLocation {
        let o = try value.object(checker, path)
        let given = ["field", "header", "cookie", "query"].filter { o[$0] != nil }
        guard given.count == 1, let kind = given.first, let name = o[kind]?.string, !name.isEmpty else {
            throw checker.error(at: value.mark, "\(path): give exactly one of field, header, cookie or query")
        }
        if o["scheme"] != nil, kind != "header" {
            checker.found.add(checker.error(at: o["scheme"]?.mark, "\(path).scheme: only a header has a scheme"))
        }
        switch kind {
        case "field":
            checkFieldName(name, at: o["field"]?.mark, "\(path).field")
            if encoding == .form, name.contains(".") {
                checker.found.add(checker.error(at: o["field"]?.mark, "\(path).field: a form has no nested fields; '\(name)' names one"))
            }
            return .field(name)
        case "header":
            if HTTPField.Name(name) == nil {
                checker.found.add(checker.error(at: o["header"]?.mark, "\(path).header: '\(name)' is not a header name"))
            } else if ServerSetHeaders.names.contains(name.lowercased()) || name.lowercased() == "host" {
                checker.found.add(
                    checker.error(at: o["header"]?.mark, "\(path).header: \(name) frames or routes the request; a token cannot travel in it"))
            }
            return .header(name, scheme: o["scheme"]?.string)
        case "query":
            return .query(name)
        default:
            return .cookie(name)
        }
    }

    func declaredError(_ value: SpecValue, _ path: String) throws(ScenarioError) -> DialectDescription.DeclaredError {
        let o = try value.object(checker, path)
        let status = try o.required("status", checker, at: value.mark).integer(checker, "\(path).status")
        // A 2xx error is a backend that answers errors with HTTP 200 and a code in the body.
        if !(400...599).contains(status), !(200...299).contains(status) || [204, 205].contains(status) {
            checker.found.add(
                checker.error(
                    at: o["status"]?.mark,
                    "\(path).status: an error's status is 4xx or 5xx, or 2xx (not 204 or 205) with its code in the body, got \(status)"))
        }
        let codeValue = try o.required("code", checker, at: value.mark)
        let code: JSONValue = codeValue.integer.map(JSONValue.integer) ?? .string(codeValue.string ?? "")
        return .init(
            status: status, code: code, message: try o.required("message", checker, at: value.mark).string(checker, "\(path).message"),
            headers: try headers(o["headers"], "\(path).headers", allowed: Placeholder.error), detail: o["detail"]?.string, when: o["when"]?.string,
            body: try o["body"].map { value throws(ScenarioError) in try template(value, "\(path).body", allowed: Placeholder.error) })
    }

    /// An error answered with a 2xx status is told from a success by its
    /// code alone: the code must stand where `errors.body` puts `{code}`, and
    /// differ from what a success answer says there (`{"code": 0, ...}`).
    func checkErrorsIn2xx(
        _ answers: [String: DialectDescription.DeclaredError], at value: SpecValue, errorBody: Template, successes: [Template]
    ) {
        let in2xx = answers.filter { (200...299).contains($0.value.status) }
        guard !in2xx.isEmpty else { return }
        let marks = value.object?.mapValues(\.mark) ?? [:]
        guard let path = errorBody.path(to: .code) else {
            checker.found.add(
                checker.error(
                    at: value.mark,
                    "errors.body: an error answered with a 2xx status needs `{code}` in errors.body, as a whole value, for a client to tell it from a success"
                ))
            return
        }
        for (key, answer) in in2xx.sorted(by: { $0.key < $1.key }) {
            if answer.body != nil && answer.body?.path(to: .code) != path {
                checker.found.add(
                    checker.error(
                        at: marks[key] ?? value.mark,
                        "errors.answers.\(key).body: a 2xx error keeps `{code}` where errors.body has it (\(path.joined(separator: ".")))"))
            }
            if successes.contains(where: { $0.literal(at: path) == answer.code }) {
                checker.found.add(
                    checker.error(
                        at: marks[key] ?? value.mark,
                        "errors.answers.\(key).code: \(answer.code.text) is also what a success answer says at \(path.joined(separator: ".")); a client could not tell them apart"
                    ))
            }
        }
    }

    func headers(_ value: SpecValue?, _ path: String, allowed: [Placeholder]) throws(ScenarioError) -> [String: Template] {
        guard let value else { return [:] }
        var result: [String: Template] = [:]
        for (name, item) in try value.object(checker, path) {
            guard HTTPField.Name(name) != nil else {
                checker.found.add(checker.error(at: item.mark, "\(path): '\(name)' is not a header name"))
                continue
            }
            if ServerSetHeaders.names.contains(name.lowercased()) {
                checker.found.add(checker.error(at: item.mark, "\(path): \(name) is set by the server from the answer it frames"))
            }
            result[name] = try template(item, "\(path).\(name)", allowed: allowed)
        }
        return result
    }

    /// A YAML value as a template: strings are read for `{placeholder}`s,
    /// a problem reported where the string stands.
    func template(_ value: SpecValue, _ path: String, allowed: [Placeholder], depth: Int = 0) throws(ScenarioError) -> Template {
        // Deeper than any backend's answer, and deeper than `dialects --json` (what drivers get in hello) can write.
        guard depth <= Self.maxTemplateDepth else {
            throw checker.error(at: value.mark, "\(path.prefix(80))…: an answer nests deeper than \(Self.maxTemplateDepth) levels")
        }
        switch value {
        case .string(let text, let mark):
            do {
                return try Template.parse(text, allowed: allowed)
            } catch {
                let word = text.split(whereSeparator: { "{}:".contains($0) }).first.map(String.init) ?? ""
                throw checker.error(at: mark, "\(path): \(error.message)\(Suggestion.hint(for: word, in: allowed.map(\.rawValue)))")
            }
        case .integer(let number, _): return .value(.integer(number))
        case .number(let number, _): return .value(.number(number))
        case .boolean(let flag, _): return .value(.boolean(flag))
        case .null: return .value(.null)
        case .array(let items, _):
            var templates: [Template] = []
            for (index, item) in items.enumerated() {
                templates.append(try template(item, "\(path)[\(index)]", allowed: allowed, depth: depth + 1))
            }
            return .array(templates)
        case .object(let members, _):
            var templates: [String: Template] = [:]
            for (key, item) in members { templates[key] = try template(item, "\(path).\(key)", allowed: allowed, depth: depth + 1) }
            return .object(templates)
        }
    }
}
