import CellpathCore

/// How the fake API sends webhooks: the key that signs them and the delivery.
public struct WebhookDispatch: Sendable {
    public var signer: WebhookSigner
    /// Takes a signed webhook and delivers it (with retries) without blocking the caller, which
    /// is a request's thread.
    public var deliver: @Sendable (SignedWebhook) -> Void

    public init(signer: WebhookSigner, deliver: @escaping @Sendable (SignedWebhook) -> Void) {
        self.signer = signer
        self.deliver = deliver
    }
}

extension FakeTruAPI {
    /// Sends the project's webhook for a PhoneCheck or SubscriberCheck that has just reached an
    /// end status (COMPLETED, EXPIRED, ERROR): the check resource, POSTed to `api.callbackURL`.
    /// Call once per check, outside the state lock.
    func announceEnd(of record: CheckRecord?) {
        guard let record, record.kind.product != .simCheck, !record.status.isOpen,
            let webhooks, let url = configuration.faults.callbackURL
        else { return }
        let body = Array(render(record, creation: false).serialized.utf8)
        guard
            let webhook = webhooks.signer.webhook(
                to: url, product: record.kind.product.rawValue, body: body,
                date: clock.now())
        else { return }
        webhooks.deliver(webhook)
    }

    /// Moves every open check whose TTL has passed to EXPIRED and announces it; the world calls
    /// this every second so that EXPIRED webhooks go out on time. Any thread.
    public func expireDueChecks() {
        let now = clock.now()
        let ttl = Double(configuration.checkTTL)
        let expired = state.withLock { state -> [CheckRecord] in
            var expired: [CheckRecord] = []
            for var record in state.checks.records.values
            where record.status.isOpen && now - record.createdAt >= ttl {
                record.status = .expired
                record.updatedAt = record.createdAt + ttl
                state.checks.store(record)
                expired.append(record)
            }
            return expired
        }
        expired.forEach(announceEnd)
    }
}
