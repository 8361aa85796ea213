import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// CONNECT asks for a proxy tunnel: the HTTP decoder hands over its head
/// and then stops parsing, so the request never ends and its answer never
/// completes. This ends the request right after its head (the router then
/// answers it like any unrouted request, in the profile's shape, journaled),
/// and closes the connection after the answer: nothing after a CONNECT head
/// is HTTP the server should read.
final class ConnectGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var tunnelAsked = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if tunnelAsked { return }
        if case .head(let head) = part, head.method == .connect {
            tunnelAsked = true
            context.fireChannelRead(data)
            context.fireChannelRead(wrapInboundOut(.end(nil)))
            return
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard tunnelAsked else { return context.write(data, promise: promise) }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        case .body:
            context.write(data, promise: promise)
        }
    }
}
