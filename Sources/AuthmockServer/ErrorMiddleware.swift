import Foundation
import Logging
import AuthmockCore
import AuthmockModel
import HTTPTypes
import Hummingbird

/// Turns whatever escapes a route (Hummingbird's 404 and 413, anything
/// unexpected) into the dialect's documented error, so no client ever sees
/// an undocumented answer.
/// The outermost one also writes the request log line (one middleware, not
/// two: each is an async frame on every request).
struct ErrorMiddleware: RouterMiddleware {
    let profile: any Dialect
    let maxBodyBytes: Int
    var logsRequests = false

    func handle(
        _ request: Request, context: AuthmockRequestContext,
        next: (Request, AuthmockRequestContext) async throws -> Response
    ) async throws -> Response {
        // One async frame per request: the log line's clock is read only when it is written.
        let start = logsRequests && context.logger.logLevel <= .info ? ContinuousClock.now : nil
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try answer(error, request, context: context)
        }
        if let start {
            RequestLog.write(request, status: response.status.code, context: context, ms: (ContinuousClock.now - start).inMilliseconds)
        }
        return response
    }

    /// The documented answer to what a route threw. The observation
    /// middleware asks it too, so the journal records the answer the client
    /// gets (one middleware frame fewer than a second ErrorMiddleware).
    func answer(_ error: any Error, _ request: Request, context: AuthmockRequestContext) throws -> Response {
        switch error {
        case let closed as ConnectionClosedByFault:
            // A fault rule closed the connection on purpose: nobody is left to answer.
            throw closed
        case let error as TokenStoreError:
            context.logger.error("token store failed for \(request.method) \(request.uri.path): \(error)")
            return profile.fail(.storeUnavailable, context: context)
        case let error as HTTPError where error.status == .notFound:
            return profile.fail(.notFound(method: "\(request.method)", path: request.uri.path), context: context)
        case let error as HTTPError where error.status == .contentTooLarge:
            return profile.fail(.payloadTooLarge("limit \(maxBodyBytes) bytes"), context: context)
        case let error as HTTPError:
            context.logger.error("unexpected HTTP error \(error.status.code) for \(request.method) \(request.uri.path)")
            return profile.fail(.internalError, context: context)
        default:
            context.logger.error("internal error for \(request.method) \(request.uri.path): \(error)")
            return profile.fail(.internalError, context: context)
        }
    }
}

/// One line per request at info level. Paths only (no query), and never a
/// token: credentials appear as kind, id and state from the journal entry.
enum RequestLog {
    /// `ms`: how long the answer took, when known.
    static func write(_ request: Request, status: Int, context: AuthmockRequestContext, ms: Double?) {
        var line = "\(request.method) \(request.uri.path) -> \(status)"
        if let code = context.notes.errorCode { line += " \(code)" }
        if let entry = context.notes.entry {
            for token in [entry.accessToken, entry.refreshToken].compactMap({ $0 }) {
                line += " [\(token.kind) \(token.id ?? "?") \(token.state)]"
            }
            if let fault = entry.fault { line += " fault \(fault)" }
        }
        if let ms { line += " (\(String(format: "%.1f", ms)) ms)" }
        context.logger.info("\(line)")
    }
}

extension Duration {
    /// For the journal's `durationMs` and the log line.
    var inMilliseconds: Double { inSeconds * 1000 }
}
