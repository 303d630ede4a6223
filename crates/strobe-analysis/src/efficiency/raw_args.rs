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
    pub dims: Option<DimsList>,
    #[serde(rename = "Input type", default)]
    pub types: Option<StrList>,
    #[serde(rename = "Concrete Inputs", default)]
    pub concrete: Option<StrList>,
    #[serde(default)]
    pub flops: Option<Number>,
}

/// `"Input Dims"`: one entry per argument (not a list: no entries).
pub(super) struct DimsList(pub Vec<Dims>);
/// A list of strings (entries that are not strings: `""`; not a list: no entries).
pub(super) struct StrList(pub Vec<String>);
/// Any JSON number as an f64 (anything else: None).
pub(super) struct Number(pub Option<f64>);

/// A value of any kind, kept only as far as a dims entry needs: an integer, a list of
/// integers (None when any member is not one), or something else.
enum Item {
    Int(i64),
    Ints(Option<Vec<i64>>),
    Other,
}

macro_rules! skip_others {
    ($out:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($out)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($out)
        }
    };
}

/// An i64 where the number is one (`Value::as_i64`: an integer within i64).
fn int_of_u64(v: u64) -> Option<i64> {
    i64::try_from(v).ok()
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
        Ok(int_of_u64(v).map_or(Item::Other, Item::Int))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Item, A::Error> {
        let mut ints = Some(Vec::new());
        while let Some(x) = s.next_element::<Item>()? {
            match (x, &mut ints) {
                (Item::Int(v), Some(v_all)) => v_all.push(v),
                _ => ints = None,
            }
        }
        Ok(Item::Ints(ints))
    }
    skip_others!(Item::Other);
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
        d.deserialize_any(ItemVisitor)
    }
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
    fn visit_i64<E>(self, _: i64) -> Result<Dims, E> {
        Ok(Dims::Tensor(Vec::new()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Dims, E> {
        Ok(Dims::Tensor(Vec::new()))
    }
    skip_others!(Dims::Tensor(Vec::new()));
}

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dims, D::Error> {
        d.deserialize_any(DimsVisitor)
    }
}

struct DimsListVisitor;
impl<'de> Visitor<'de> for DimsListVisitor {
    type Value = DimsList;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of dims")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<DimsList, A::Error> {
        let mut out = Vec::with_capacity(s.size_hint().unwrap_or(4));
        while let Some(d) = s.next_element::<Dims>()? {
            out.push(d);
        }
        Ok(DimsList(out))
    }
    fn visit_i64<E>(self, _: i64) -> Result<DimsList, E> {
        Ok(DimsList(Vec::new()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<DimsList, E> {
        Ok(DimsList(Vec::new()))
    }
    skip_others!(DimsList(Vec::new()));
}

impl<'de> Deserialize<'de> for DimsList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<DimsList, D::Error> {
        d.deserialize_any(DimsListVisitor)
    }
}

/// A string, or `""` for anything else.
struct Text(String);

struct TextVisitor;
impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<Text, E> {
        Ok(Text(v.to_string()))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
        Ok(Text(String::new()))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
        Ok(Text(String::new()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
        Ok(Text(String::new()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
        Ok(Text(String::new()))
    }
    fn visit_unit<E>(self) -> Result<Text, E> {
        Ok(Text(String::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Text, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(String::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Text, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(String::new()))
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct StrListVisitor;
impl<'de> Visitor<'de> for StrListVisitor {
    type Value = StrList;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of strings")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<StrList, A::Error> {
        let mut out = Vec::with_capacity(s.size_hint().unwrap_or(4));
        while let Some(Text(t)) = s.next_element::<Text>()? {
            out.push(t);
        }
        Ok(StrList(out))
    }
    fn visit_i64<E>(self, _: i64) -> Result<StrList, E> {
        Ok(StrList(Vec::new()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<StrList, E> {
        Ok(StrList(Vec::new()))
    }
    skip_others!(StrList(Vec::new()));
}

impl<'de> Deserialize<'de> for StrList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StrList, D::Error> {
        d.deserialize_any(StrListVisitor)
    }
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
    fn visit_bool<E>(self, _: bool) -> Result<Number, E> {
        Ok(Number(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Number, E> {
        Ok(Number(None))
    }
    fn visit_unit<E>(self) -> Result<Number, E> {
        Ok(Number(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Number, A::Error> {
        while s.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Number(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Number, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Number(None))
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        d.deserialize_any(NumberVisitor)
    }
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
