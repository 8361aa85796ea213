import NIOFoundationEssentialsCompat
import AuthmockCore
import AuthmockModel
import Foundation
import HTTPTypes
import Hummingbird

/// The HTTP face of `MockControl`, under `/_authmock/`. JSON in and out,
/// errors as `{"error": code, "message": ...}` in every dialect.
enum ControlRoutes {
    static let prefix = ControlOperation.prefix

    /// Each operation's behaviour; its method, path and summary are its declaration.
    static func handle(_ operation: ControlOperation, _ request: Request, _ control: MockControl) async throws(ControlInputError) -> Response {
        switch operation {
        case .routes:
            let routes = ControlOperation.allCases.map { Discovery.Entry(method: $0.method, path: prefix + $0.path, summary: $0.summary) }
            return JSONResponse.encode(Discovery(routes: routes), encoder: ControlWire.encoder)
        case .reset:
            try await control.reset()
            return JSONResponse.encode(["reset": true])
        case .clock:
            return JSONResponse.encode(try await control.clock(), encoder: ControlWire.encoder)
        case .advanceClock:
            let body = try await input(request)
            try body.allow(["seconds"])
            return JSONResponse.encode(
                try await control.advanceClock(seconds: try body.required(try body.double("seconds"), "seconds")), encoder: ControlWire.encoder)
        case .setClock:
            let body = try await input(request)
            try body.allow(["offsetSeconds"])
            let offset = try body.required(try body.double("offsetSeconds"), "offsetSeconds")
            return JSONResponse.encode(try await control.setClock(offsetSeconds: offset), encoder: ControlWire.encoder)
        case .tokens:
            return JSONResponse.encode(try await control.tokens(), encoder: ControlWire.encoder)
        case .expireTokens:
            return JSONResponse.encode(try await control.expire(try TokenSelector(try await input(request))))
        case .revokeTokens:
            return JSONResponse.encode(try await control.revoke(try TokenSelector(try await input(request))))
        case .keys:
            return JSONResponse.encode(try await control.keys(), encoder: ControlWire.encoder)
        case .rotateKeys:
            let body = try await input(request)
            try body.allow(["graceSeconds"])
            return JSONResponse.encode(try await control.rotateKeys(graceSeconds: try body.double("graceSeconds")), encoder: ControlWire.encoder)
        case .faults:
            return JSONResponse.encode(control.faults())
        case .addFault:
            return JSONResponse.encode(control.addFault(try FaultRule(try await input(request)).checkedSituation()), status: .created)
        case .clearFaults:
            return JSONResponse.encode(["removed": control.clearFaults()])
        case .journal:
            return try await JournalStream.response(control, JournalFilter(query: query(request)), encoder: ControlWire.encoder)
        case .pruneTokens:
            return JSONResponse.encode(try await control.prune(), encoder: ControlWire.encoder)
        case .journalCount:
            let filter = try JournalFilter(query: query(request))
            if filter.limit != nil { throw ControlInputError(.invalidValue, "limit pages GET \(prefix)/journal; a count has no pages") }
            return JSONResponse.encode(["count": try await control.journalCount(filter)])
        case .arrivals:
            let filter = try JournalFilter(query: query(request))
            guard filter.call == nil, filter.since == nil, filter.limit == nil else {
                throw ControlInputError(
                    .invalidValue, "arrivals are counted by kind only (?kind=refresh,resource); the journal has calls and sequence numbers")
            }
            return JSONResponse.encode(["count": control.arrivals(filter.kinds ?? Set(RouteKind.allCases))])
        case .verdicts:
            return JSONResponse.encode(try await control.verdicts(), encoder: ControlWire.encoder)
        case .console:
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: ConsolePage.html)))
        case .timeline:
            return Response(
                status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: try await control.timeline())))
        case .events:
            return ConsoleEvents.response(control)
        }
    }

    static func add(to router: some RouterMethods<AuthmockRequestContext>, mock: Authmock) {
        let control = mock.control
        for operation in ControlOperation.allCases {
            let handler: @Sendable (Request, AuthmockRequestContext) async throws -> Response = { request, _ in
                if let refusal = refusal(request, mock: mock) { return refusal }
                if operation == .console, let token = consoleToken(request, mock: mock) { return consoleSignIn(token, mock: mock) }
                do throws(ControlInputError) {
                    return try await handle(operation, request, control)
                } catch {
                    return failure(error)
                }
            }
            let method = HTTPRequest.Method(operation.method)!
            router.on(RouterPath(prefix + operation.path), method: method, use: handler)
            // HEAD is GET without the body (RFC 9110 section 9.3.2).
            if method == .get { router.on(RouterPath(prefix + operation.path), method: .head, use: handler) }
        }
        // Every other method on a listed path answers in the control API's
        // shape (admin token first), never the dialect's 404.
        let byPath = Dictionary(grouping: ControlOperation.allCases, by: \.path)
        for (path, operations) in byPath {
            var allowed = Set(operations.compactMap { HTTPRequest.Method($0.method) })
            if allowed.contains(.get) { allowed.insert(.head) }
            let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            for method in allMethods where !allowed.contains(method) {
                router.on(RouterPath(prefix + path), method: method) { request, _ in
                    if let refusal = refusal(request, mock: mock) { return refusal }
                    var response = failure(
                        ControlInputError(.methodNotAllowed, "\(request.method) \(request.uri.path) is not a control route; it takes \(allow)"))
                    response.headers[.allow] = allow
                    return response
                }
            }
        }
        for method in allMethods {
            router.on(RouterPath(prefix + "/**"), method: method) { request, _ in
                if let refusal = refusal(request, mock: mock) { return refusal }
                return failure(ControlInputError(.notFound, "no control route \(request.method) \(request.uri.path); GET \(prefix)/ lists them"))
            }
        }
    }

    /// The methods a control path answers, routed or not.
    static let allMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options, .trace]

    /// What every control request passes first, routed or not: the same-site
    /// check, then the admin token.
    private static func refusal(_ request: Request, mock: Authmock) -> Response? {
        checkHost(request, mock: mock) ?? checkSameSite(request, mock: mock) ?? checkAdmin(request, mock: mock)
    }

    /// DNS rebinding: a page on `evil.example` whose name is made to resolve
    /// to 127.0.0.1 reaches the mock as the same origin (its `Origin` and
    /// `Host` agree). Without an admin token the control API therefore
    /// answers only names that are this machine's: an IP address, localhost
    /// (and `*.localhost`), and the names of `--host` and `--public-url`.
    private static func checkHost(_ request: Request, mock: Authmock) -> Response? {
        guard mock.options.adminToken?.isEmpty != false else { return nil }
        guard let authority = request.head.authority ?? HTTPField.Name("Host").flatMap({ request.headers[$0] }) else { return nil }
        let name = hostName(authority)
        if isOwnName(name, mock: mock) { return nil }
        return failure(
            ControlInputError(
                .foreignHost,
                "Host \(name) is not a name of this machine: without an admin token the control API answers IP addresses, localhost, --host's and --public-url's names (DNS rebinding); set --admin-token to use it as \(name)"
            ))
    }

    /// The host of an authority (`[::1]:8080` -> `::1`, `Example.COM:80` -> `example.com`).
    static func hostName(_ authority: String) -> String {
        var host = Substring(authority)
        if host.hasPrefix("[") { host = host.dropFirst().prefix { $0 != "]" } } else if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }

    static func isOwnName(_ name: String, mock: Authmock) -> Bool {
        if name == "localhost" || name.hasSuffix(".localhost") || name.contains(":") { return true }
        // An IPv4 address: four numbers.
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) { return true }
        let configured = [mock.options.host] + [mock.options.publicURL.flatMap { URL(string: $0)?.host }].compactMap { $0 }
        return configured.map { hostName($0) }.contains(name)
    }

    /// A web page on another origin can send simple requests (a form, a
    /// `text/plain` fetch) to a mock on localhost without any preflight, so
    /// the control API refuses a foreign `Origin` (browsers send one with
    /// every such POST) and any body that is not JSON. The server's own
    /// origin and `--cors-origin`'s origins are allowed.
    private static func checkSameSite(_ request: Request, mock: Authmock) -> Response? {
        if let origin = request.headers[.origin] {
            // HTTP/1's Host arrives as the authority; a client that sends Host as a field has it there.
            let host = request.head.authority ?? HTTPField.Name("Host").flatMap { request.headers[$0] }
            let own = host.map { ["http://" + $0, "https://" + $0] } ?? []
            let allowed: Bool
            switch mock.cors {
            case .anyOrigin: allowed = true
            case .origins(let list): allowed = list.contains(origin) || own.contains(origin)
            case .off: allowed = own.contains(origin)
            }
            if !allowed {
                return failure(ControlInputError(.crossOrigin, "Origin \(origin) may not use the control API; allow it with --cors-origin"))
            }
        }
        let hasBody = request.headers[.transferEncoding] != nil || (request.headers[.contentLength].flatMap { Int($0) } ?? 0) > 0
        if hasBody {
            let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
            if type != "application/json" {
                return failure(ControlInputError(.notJSON, "send the body as Content-Type: application/json (got \(type ?? "none"))"))
            }
        }
        return nil
    }

    /// A browser cannot send the admin token as a header with the console's
    /// own requests, so the console's address may carry it once
    /// (`GET /_authmock/console?admin_token=...`); it is traded for this
    /// cookie (HttpOnly, SameSite=Strict, on the control API's path only)
    /// and the address left without it.
    static let adminCookie = "authmock_admin"
    static let adminTokenParameter = "admin_token"

    /// The admin token the console's address carries, when it is the right one.
    private static func consoleToken(_ request: Request, mock: Authmock) -> String? {
        guard let expected = mock.options.adminToken, !expected.isEmpty, request.uri.path == prefix + ControlOperation.console.path,
            let token = query(request)[adminTokenParameter], constantTimeMatch(token, expected)
        else { return nil }
        return token
    }

    /// The console's address with the admin token: the cookie, and the page's own address again.
    private static func consoleSignIn(_ token: String, mock: Authmock) -> Response {
        let secure = mock.tlsConfiguration != nil ? "; Secure" : ""
        // Percent-encoded: a token may hold what a cookie's value cannot (`;`, spaces).
        let value = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return Response(
            status: .seeOther,
            headers: [
                .location: prefix + ControlOperation.console.path, .cacheControl: "no-store",
                .setCookie: "\(adminCookie)=\(value); Path=\(prefix); HttpOnly; SameSite=Strict\(secure)",
            ])
    }

    /// A cookie's value, from every `Cookie` header of the request.
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        for field in headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name { return String(parts[1]).removingPercentEncoding }
            }
        }
        return nil
    }

    /// With an admin token configured, every control request must carry it:
    /// as a Bearer token, or the console's cookie (the console's address may
    /// carry it once, to be traded for the cookie). OAuth access tokens are a
    /// different secret and never match.
    private static func checkAdmin(_ request: Request, mock: Authmock) -> Response? {
        guard let expected = mock.options.adminToken, !expected.isEmpty else { return nil }
        if case .bearer(let token) = PresentedCredential(request.headers), constantTimeMatch(token, expected) { return nil }
        if let token = cookie(adminCookie, in: request.headers), constantTimeMatch(token, expected) { return nil }
        if consoleToken(request, mock: mock) != nil { return nil }
        var response = failure(
            ControlInputError(
                .adminTokenRequired,
                "send Authorization: Bearer <admin token> (--admin-token / AUTHMOCK_ADMIN_TOKEN); a browser opens \(prefix)/console?\(adminTokenParameter)=<admin token>"
            ))
        response.headers[.wwwAuthenticate] = #"Bearer realm="authmock-control""#
        return response
    }

    static func failure(_ error: ControlInputError) -> Response {
        let row = error.kind.row
        return JSONResponse.encode(["error": row.code, "message": error.message], status: .init(code: row.status))
    }

    private static func input(_ request: Request) async throws(ControlInputError) -> StrictObject {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: 1_048_576)
        } catch {
            throw ControlInputError(.invalidJSON, "body could not be read (over 1 MiB?)")
        }
        return try StrictObject(json: Data(buffer: buffer))
    }

    private static func query(_ request: Request) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { result[String(key)] = String(value) }
        return result
    }

    struct Discovery: Encodable {
        struct Entry: Encodable { var method: String, path: String, summary: String }
        var name = "authmock control API"
        var version = AuthmockVersion.current
        var routes: [Entry]
    }
}

private func constantTimeMatch(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8), y = Array(b.utf8)
    var diff = UInt8(x.count == y.count ? 0 : 1)
    for i in 0..<max(x.count, y.count) { diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0) }
    return diff == 0
}
