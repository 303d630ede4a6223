//! The four args keys the formulas read, deserialized straight into what `OpArgs` keeps.
//!
//! Reading them as `serde_json::Value` first built a tree per op (a map per list, a heap
//! string per dtype) only to walk it once: on a 1 GB trace that was half of the efficiency
//! figures' time. These visitors take the same JSON to the same result and skip what they do
//! not keep without building it. Where a key holds something unexpected they read it as the
//! `Value` path did: a dims entry that is not a list of integers is an empty tensor, a type
//! that is not a string is `""`, a `flops` that is not a number is absent.

use super::shapes::Dims;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The keys of an op's args that the formulas read; every other one is skipped.
#[derive(serde::Deserialize)]
pub(super) struct RawArgs {
    #[serde(rename = "Input Dims", default)]
    pub dims: Option<List<Dims>>,
    #[serde(rename = "Input type", default)]
    pub types: Option<List<Text>>,
    #[serde(rename = "Concrete Inputs", default)]
    pub concrete: Option<List<Text>>,
    #[serde(default)]
    pub flops: Option<Number>,
}

/// A list's members (not a list: none). `"Input Dims"` holds one entry per argument.
pub(super) struct List<T>(pub Vec<T>);
/// A string, or `""` for anything else.
pub(super) struct Text(pub String);
/// Any JSON number as an f64 (anything else: None).
pub(super) struct Number(pub Option<f64>);

/// A value of any kind, kept only as far as a dims entry needs: an integer, a list of
/// integers (None when any member is not one), or something else.
enum Item {
    Int(i64),
    Ints(Option<Vec<i64>>),
    Other,
}

/// Visitor methods for the JSON kinds a visitor does not keep: each reads as `$out`, lists
/// and objects skipped to their end.
macro_rules! others_read_as {
    ($out:expr; $($kind:ident),*) => { $( others_read_as!(@ $kind $out); )* };
    (@ bool $out:expr) => { fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> { Ok($out) } };
    (@ i64 $out:expr) => { fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> { Ok($out) } };
    (@ u64 $out:expr) => { fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> { Ok($out) } };
    (@ f64 $out:expr) => { fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> { Ok($out) } };
    (@ str $out:expr) => { fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> { Ok($out) } };
    (@ unit $out:expr) => { fn visit_unit<E>(self) -> Result<Self::Value, E> { Ok($out) } };
    (@ seq $out:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok($out)
        }
    };
    (@ map $out:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($out)
        }
    };
}

/// `Deserialize` for a type read by its visitor from any JSON value.
macro_rules! from_any {
    ($($t:ty => $v:expr),* $(,)?) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                d.deserialize_any($v)
            }
        }
    )*};
}

from_any!(Item => ItemVisitor, Dims => DimsVisitor, Text => TextVisitor, Number => NumberVisitor);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<List<T>, D::Error> {
        d.deserialize_any(ListVisitor(std::marker::PhantomData))
    }
}

struct ItemVisitor;
impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Item, E> {
        Ok(Item::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Item, E> {
        // `Value::as_i64`: an integer within i64
        Ok(i64::try_from(v).map_or(Item::Other, Item::Int))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Item, A::Error> {
        let mut ints = Some(Vec::new());
        while let Some(x) = s.next_element::<Item>()? {
            match (x, &mut ints) {
                (Item::Int(v), Some(all)) => all.push(v),
                _ => ints = None,
            }
        }
        Ok(Item::Ints(ints))
    }
    others_read_as!(Item::Other; bool, f64, str, unit, map);
}

/// One dims entry: a list holding a list is a tensor list (its members that are lists of
/// integers), any other list a tensor (empty unless all its members are integers), anything
/// else an empty tensor.
struct DimsVisitor;
impl<'de> Visitor<'de> for DimsVisitor {
    type Value = Dims;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of sizes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Dims, A::Error> {
        let (mut ints, mut all_ints) = (Vec::new(), true);
        let mut lists: Option<Vec<Vec<i64>>> = None;
        while let Some(x) = s.next_element::<Item>()? {
            match x {
                Item::Int(v) => ints.push(v),
                Item::Ints(l) => {
                    all_ints = false;
                    lists.get_or_insert_with(Vec::new).extend(l);
                }
                Item::Other => all_ints = false,
            }
        }
        Ok(match lists {
            Some(l) => Dims::List(l),
            None if all_ints => Dims::Tensor(ints),
            None => Dims::Tensor(Vec::new()),
        })
    }
    others_read_as!(Dims::Tensor(Vec::new()); bool, i64, u64, f64, str, unit, map);
}

struct ListVisitor<T>(std::marker::PhantomData<T>);
impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<List<T>, A::Error> {
        let mut out = Vec::with_capacity(s.size_hint().unwrap_or(4));
        while let Some(x) = s.next_element::<T>()? {
            out.push(x);
        }
        Ok(List(out))
    }
    others_read_as!(List(Vec::new()); bool, i64, u64, f64, str, unit, map);
}

struct TextVisitor;
impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    others_read_as!(Text(String::new()); bool, i64, u64, f64, unit, seq, map);
}

struct NumberVisitor;
impl<'de> Visitor<'de> for NumberVisitor {
    type Value = Number;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_i64<E>(self, v: i64) -> Result<Number, E> {
        Ok(Number(Some(v as f64)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Number, E> {
        Ok(Number(Some(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Number, E> {
        Ok(Number(Some(v)))
    }
    others_read_as!(Number(None); bool, str, unit, seq, map);
}

#[cfg(test)]
mod tests {
    use super::super::shapes::{Dims, OpArgs};
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// The reading through `serde_json::Value` these visitors replaced: the reference.
    fn by_value(args: &str) -> Option<OpArgs> {
        #[derive(serde::Deserialize)]
        struct Raw {
            #[serde(rename = "Input Dims", default)]
            dims: Option<Value>,
            #[serde(rename = "Input type", default)]
            types: Option<Value>,
            #[serde(rename = "Concrete Inputs", default)]
            concrete: Option<Value>,
            #[serde(default)]
            flops: Option<Value>,
        }
        fn sizes(v: &Value) -> Option<Vec<i64>> {
            v.as_array()?.iter().map(|x| x.as_i64()).collect()
        }
        if args.is_empty() || !(args.contains("Input Dims") || args.contains("\"flops\"")) {
            return None;
        }
        let o: Raw = serde_json::from_str(args).ok()?;
        let dims = o
            .dims
            .as_ref()
            .and_then(|d| d.as_array())
            .map(|a| {
                a.iter()
                    .map(|x| match x.as_array() {
                        Some(inner) if inner.iter().any(|y| y.is_array()) => {
                            Dims::List(inner.iter().filter_map(sizes).collect())
                        }
                        _ => Dims::Tensor(sizes(x).unwrap_or_default()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let strings = |v: &Option<Value>| -> Vec<String> {
            v.as_ref()
                .and_then(|d| d.as_array())
                .map(|a| a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect())
                .unwrap_or_default()
        };
        let kineto_flops = o.flops.as_ref().and_then(|f| f.as_f64()).filter(|f| f.is_finite() && *f >= 0.0);
        Some(OpArgs { dims, types: strings(&o.types), concrete: strings(&o.concrete), kineto_flops })
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-5i64..5000).prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z0-9:<> ]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-z]{1,3}", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Dims as Kineto records them (lists of sizes, lists of those), with odd members mixed in.
    fn dims_like() -> impl Strategy<Value = Value> {
        let size = prop_oneof![
            4 => (0i64..5000).prop_map(Value::from),
            1 => any::<u64>().prop_map(Value::from),
            1 => any::<i64>().prop_map(Value::from),
            1 => any_value(),
        ];
        let tensor = proptest::collection::vec(size, 0..4).prop_map(Value::Array);
        let entry = prop_oneof![
            4 => tensor.clone(),
            2 => proptest::collection::vec(tensor, 0..3).prop_map(Value::Array),
            1 => any_value(),
        ];
        prop_oneof![4 => proptest::collection::vec(entry, 0..6).prop_map(Value::Array), 1 => any_value()]
    }

    proptest! {
        #[test]
        fn the_visitors_read_what_the_value_tree_read(
            dims in dims_like(),
            types in any_value(),
            concrete in any_value(),
            flops in any_value(),
            other in any_value(),
            keep in 0u8..32,
        ) {
            let mut o = serde_json::Map::new();
            let fields = [("Input Dims", dims), ("Input type", types), ("Concrete Inputs", concrete), ("flops", flops), ("Input Strides", other)];
            for (bit, (k, v)) in fields.into_iter().enumerate() {
                if keep & (1 << bit) != 0 || bit == 0 {
                    o.insert(k.to_string(), v);
                }
            }
            let text = Value::Object(o).to_string();
            prop_assert_eq!(OpArgs::parse(&text), by_value(&text), "{}", text);
        }
    }

    #[test]
    fn the_recorded_shapes_of_kineto_ops() {
        let text = json!({
            "External id": 7, "Record function id": 0, "Ev Idx": 6,
            "Input Dims": [[8, 1024, 768], [768, 2304], [], [[2, 3], [4]], [1, [2]], [1.5, 2]],
            "Input type": ["c10::BFloat16", "float", "Scalar", "TensorList", 3, null],
            "Input Strides": [[786432, 768, 1], [1, 768]],
            "Concrete Inputs": ["", "", "1", "", "[1, 1]", ""],
            "flops": 1.2e10
        })
        .to_string();
        let a = OpArgs::parse(&text).unwrap();
        assert_eq!(Some(&a), by_value(&text).as_ref());
        assert_eq!(a.dims[0], Dims::Tensor(vec![8, 1024, 768]));
        assert_eq!(a.dims[3], Dims::List(vec![vec![2, 3], vec![4]]));
        assert_eq!(a.dims[4], Dims::List(vec![vec![2]]));
        assert_eq!(a.dims[5], Dims::Tensor(vec![]));
        assert_eq!(a.types[4], "");
        assert_eq!(a.kineto_flops, Some(1.2e10));
        // a repeated key is an error in both readings (no figures from a malformed record)
        let twice = r#"{"Input Dims": [[1]], "Input Dims": [[2]]}"#;
        assert_eq!(OpArgs::parse(twice), None);
        assert_eq!(by_value(twice), None);
    }
}
