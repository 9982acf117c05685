/// Quantiles by nearest rank: the value at rank ⌈q·n⌉ of the sorted values, so that a quantile
/// is always one of the values measured (the field summary and the field report agree).
public enum Quantile {
    /// The `q` quantile (0…1) of `sorted` (ascending, not empty).
    public static func nearestRank(_ sorted: [Double], _ q: Double) -> Double {
        let rank = max(1, Int((q * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
