public import AuthmockCore
import Foundation
import HTTPTypes
import Hummingbird

/// Which web origins may call the client-facing routes (token endpoint,
/// `/api/`, `/graphql`) from a browser. Off by default: the backends the
/// mock stands in for decide their own CORS, and a client test should not
/// pass only because the mock was more open than production. The attach
/// runner turns it on for its case servers, whose browser page lives on
/// another port (another origin).
public enum CORSPolicy: Sendable, Equatable {
    case off
    /// Any origin (`Access-Control-Allow-Origin: *`; no credentials).
    case anyOrigin
    /// Only these exact origins (`scheme://host[:port]`), echoed back.
    case origins([String])

    /// `""` off, `*` any origin, otherwise a comma-separated list of origins.
    public init(setting: String) throws(SettingsError) {
        let trimmed = setting.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed == "off" {
            self = .off
        } else if trimmed == "*" {
            self = .anyOrigin
        } else {
            let list = trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            for origin in list where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) || origin.dropFirst(8).contains("/") {
                throw SettingsError("cors_origin: '\(origin)' is not an origin (scheme://host[:port], no path), '*', or empty for off")
            }
            self = .origins(list)
        }
    }
}

/// Hummingbird's CORSMiddleware answers preflights (before the journal sees
/// them: a preflight is the browser's, not the client's) and sets the
/// allowed origin; it puts `Access-Control-Expose-Headers` only on the
/// preflight, so this adds it to real answers too, where the browser reads
/// it. Exposed: the challenge, Retry-After, and a refresh on resources'
/// dialect's token header, which browser interceptors must be able to read.
struct CORSMiddlewareStack: RouterMiddleware {
    typealias Context = AuthmockRequestContext
    /// (origin or nil for any, its middleware)
    let policies: [(origin: String?, middleware: CORSMiddleware<Context>)]
    let exposed: String

    init?(policy: CORSPolicy, exposing extra: [String]) {
        var headers = ["WWW-Authenticate", "Retry-After"]
        for name in extra where !headers.contains(where: { $0.lowercased() == name.lowercased() }) { headers.append(name) }
        exposed = headers.joined(separator: ", ")
        let allowHeaders: [HTTPField.Name] = [
            .accept, .authorization, .contentType, .origin, .authmockCall,
            HTTPField.Name("X-Requested-With")!, HTTPField.Name("Apollo-Require-Preflight")!, HTTPField.Name("X-Apollo-Operation-Name")!,
        ]
        func make(_ origin: CORSMiddleware<Context>.AllowOriginExtended) -> CORSMiddleware<Context> {
            CORSMiddleware(
                allowOrigin: origin, allowHeaders: allowHeaders, allowMethods: [.get, .post, .put, .patch, .delete, .head, .options],
                exposedHeaders: headers, maxAge: .seconds(600))
        }
        switch policy {
        case .off: return nil
        case .anyOrigin: policies = [(nil, make(.all))]
        case .origins(let list): policies = list.map { ($0, make(.oneOf($0))) }
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin],
            let policy = policies.first(where: { $0.origin == nil || $0.origin == origin })
        else { return try await next(request, context) }
        var response = try await policy.middleware.handle(request, context: context, next: next)
        if request.method != .options { response.headers[.accessControlExposeHeaders] = exposed }
        return response
    }
}
